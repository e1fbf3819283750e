/**
 * The stdio wire as the SDK's `serveStdio` sees it while the host is still starting: the opening handshake
 * (`initialize`, `notifications/initialized`, `server/discover`, `ping`) passes at once, since the server answers it
 * from what it knows without any service; every other message is held, in arrival order, until {@link StdioGate.open}
 * releases them or {@link StdioGate.refuse} answers them. Only the host's start-up decides which.
 */
import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions
} from "@modelcontextprotocol/server"

/** What the server answers with no service: its identity, capabilities and instructions, and liveness. */
const handshake: ReadonlySet<string> = new Set(["initialize", "notifications/initialized", "server/discover", "ping"])

const isHandshake = (message: JSONRPCMessage): boolean =>
  (isJSONRPCRequest(message) || isJSONRPCNotification(message)) && handshake.has(message.method)

type State =
  | { readonly _tag: "Starting"; readonly held: Array<readonly [JSONRPCMessage, MessageExtraInfo | undefined]> }
  | { readonly _tag: "Open" }
  | { readonly _tag: "Refusing"; readonly code: number; readonly message: string }

/** @internal */
export class StdioGate implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined
  private state: State = { _tag: "Starting", held: [] }

  constructor(private readonly wire: Transport) {
    wire.onclose = () => this.onclose?.()
    wire.onerror = (error) => this.onerror?.(error)
    wire.onmessage = (message, extra) => this.receive(message, extra)
  }

  start(): Promise<void> {
    return this.wire.start()
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // The server advertises `listChanged: false`: tools registered once the principal is known (after the
    // handshake connected the server) change no list the client could have seen, since `tools/list` was held.
    if (isJSONRPCNotification(message) && message.method === "notifications/tools/list_changed") return Promise.resolve()
    return this.wire.send(message, options)
  }

  close(): Promise<void> {
    return this.wire.close()
  }

  /** Start-up completed: the held messages reach the server in arrival order, and every later one at once. */
  open(): void {
    const state = this.state
    if (state._tag !== "Starting") return
    this.state = { _tag: "Open" }
    for (const [message, extra] of state.held) this.onmessage?.(message, extra)
  }

  /** Start-up failed: every held and later request, handshake included, is answered with this error. */
  refuse(code: number, message: string): void {
    const state = this.state
    if (state._tag !== "Starting") return
    this.state = { _tag: "Refusing", code, message }
    for (const [held] of state.held) this.answer(held)
  }

  private receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    const state = this.state
    switch (state._tag) {
      case "Open":
        return this.onmessage?.(message, extra)
      case "Starting":
        if (isHandshake(message)) return this.onmessage?.(message, extra)
        state.held.push([message, extra])
        return
      case "Refusing":
        return this.answer(message)
    }
  }

  private answer(message: JSONRPCMessage): void {
    const state = this.state
    if (state._tag !== "Refusing" || !isJSONRPCRequest(message)) return
    this.wire.send({ jsonrpc: "2.0", id: message.id, error: { code: state.code, message: state.message } }).catch((error: unknown) =>
      this.onerror?.(error instanceof Error ? error : new Error(String(error)))
    )
  }
}
