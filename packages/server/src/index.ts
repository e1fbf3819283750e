/**
 * @since 0.1.0
 */
export * as Demo from "./Demo.js"
export * as Listener from "./Listener.js"
export * as Main from "./Main.js"
export * as Cors from "./Cors.js"
export * as McpInstructions from "./McpInstructions.js"
export * as McpRoute from "./McpRoute.js"
export * as McpStdio from "./McpStdio.js"
export * as Readiness from "./Readiness.js"
export * as Server from "./Server.js"
export * as Startup from "./Startup.js"
export * as StartupFailure from "./StartupFailure.js"
export * as Telemetry from "./Telemetry.js"
export * as WorkerMain from "./WorkerMain.js"
export * as Workers from "./Workers.js"
