/**
 * The stdio server as a child process, behind the SDK's `Transport` interface, for a test that must hold
 * on a busy machine: `start()` resolves once the server says it is serving (no request races its
 * start-up against a timer), and `close()` ends its input and waits until it has exited (no kill while
 * it shuts its database down). Messages are framed with the SDK's own `ReadBuffer`: anything on stdout
 * that is not a protocol message surfaces through `onerror`.
 */
import { type JSONRPCMessage, ReadBuffer, serializeMessage, type Transport } from "@modelcontextprotocol/client"
import { getDefaultEnvironment } from "@modelcontextprotocol/client/stdio"
import { type ChildProcess, spawn } from "node:child_process"

/** What the server writes to stderr once its services are open and it answers every request (McpStdio.serveOver). */
export const readyLine = /Serving MCP on stdio/

export class ServerProcess implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined

  /** Everything the server wrote to stderr (its logs). */
  stderr = ""
  private child: ChildProcess | undefined
  private exited: Promise<void> | undefined
  private readonly buffer = new ReadBuffer()

  constructor(
    private readonly options: { readonly cwd: string; readonly args: ReadonlyArray<string>; readonly env: Readonly<Record<string, string>> }
  ) {}

  start(): Promise<void> {
    if (this.child !== undefined) return Promise.reject(new Error("already started"))
    const child = spawn(process.execPath, [...this.options.args], {
      cwd: this.options.cwd,
      // The SDK's safe default environment plus ours, so a DATABASE_URL of the test run never reaches it.
      env: { ...getDefaultEnvironment(), ...this.options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    this.child = child
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()))
    child.stdout.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (;;) {
        try {
          const message = this.buffer.readMessage()
          if (message === null) break
          this.onmessage?.(message)
        } catch (error) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)))
        }
      }
    })
    child.once("close", () => this.onclose?.())
    return new Promise((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        this.stderr += chunk.toString("utf8")
        if (readyLine.test(this.stderr)) resolve()
      })
      child.once("error", reject)
      child.once("exit", (code, signal) => reject(new Error(`The server exited before serving (${code ?? signal}):\n${this.stderr}`)))
    })
  }

  /** Resolves once the server's stderr matches `pattern` (a log line), however long that takes. */
  waitForStderr(pattern: RegExp): Promise<void> {
    const child = this.child
    if (pattern.test(this.stderr)) return Promise.resolve()
    if (child === undefined) return Promise.reject(new Error("not started"))
    return new Promise((resolve, reject) => {
      const onData = () => {
        if (pattern.test(this.stderr)) {
          child.stderr?.off("data", onData)
          resolve()
        }
      }
      child.stderr?.on("data", onData)
      child.once("exit", () => reject(new Error(`The server exited before logging ${pattern.source}:\n${this.stderr}`)))
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin
    if (stdin === undefined || stdin === null) return Promise.reject(new Error("not started"))
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once("drain", () => resolve())
    })
  }

  /** Ends the server's input and waits for it to exit on its own. */
  async close(): Promise<void> {
    this.child?.stdin?.end()
    await this.exited
  }
}
