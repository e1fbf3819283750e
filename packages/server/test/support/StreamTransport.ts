/**
 * A client transport over a pair of streams, the stdio server's stdout in and its stdin out: the SDK's own line
 * framing (`ReadBuffer`, `serializeMessage`), which both client generations speak.
 */
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type { Readable, Writable } from "node:stream"

export class StreamTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private readonly buffer = new ReadBuffer()
  constructor(private readonly input: Readable, private readonly output: Writable) {}
  start(): Promise<void> {
    this.input.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk)
      for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message)
    })
    return Promise.resolve()
  }
  send(message: JSONRPCMessage): Promise<void> {
    this.output.write(serializeMessage(message))
    return Promise.resolve()
  }
  close(): Promise<void> {
    this.output.end()
    this.onclose?.()
    return Promise.resolve()
  }
}
