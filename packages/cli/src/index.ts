/**
 * @since 0.1.0
 */
export * as Cli from "./Cli.js"
export * as ColorPolicy from "./ColorPolicy.js"
export * as CommandTree from "./CommandTree.js"
export * as Credentials from "./Credentials.js"
export * as DemoKey from "./DemoKey.js"
export * as EventsListen from "./EventsListen.js"
export * as Failure from "./Failure.js"
export * as Format from "./Format.js"
export * as Help from "./Help.js"
export * as InProcess from "./InProcess.js"
export * as InputFlags from "./InputFlags.js"
export * as Login from "./Login.js"
export * as Operators from "./Operators.js"
export * as Progress from "./Progress.js"
export * as Remote from "./Remote.js"
