// A tiny local receiver for the service's signed webhooks (docs/events.md, "Receiving events on your machine").
// It verifies each delivery's Standard Webhooks signature over the raw body with the `standardwebhooks` package,
// answers an MCP subscription's verification challenge, and prints every event it accepts.
//
//   WEBHOOK_SECRET=whsec_... node examples/server/events-receiver.mjs       # listens on http://127.0.0.1:4000
//
// RECEIVER_PORT changes the port. Only for a developer's machine: the server must run with
// SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true to deliver to 127.0.0.1.
import { createServer } from "node:http"
import { Webhook } from "standardwebhooks"

const secret = process.env.WEBHOOK_SECRET
if (secret === undefined || !secret.startsWith("whsec_")) {
  console.error("Set WEBHOOK_SECRET to the whsec_ secret the Destination (or your subscription) was created with.")
  process.exit(1)
}
const port = Number(process.env.RECEIVER_PORT ?? 4000)
const webhook = new Webhook(secret)

createServer((request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    // Verify the exact bytes received: re-serialized JSON would not match the signature.
    const body = Buffer.concat(chunks).toString("utf8")
    let event
    try {
      event = webhook.verify(body, request.headers)
    } catch (error) {
      console.error(`refused a request: ${error.message}`)
      response.writeHead(401).end()
      return
    }
    if (event.type === "verification") {
      // An MCP subscription's challenge: echo it back within 10 seconds.
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ challenge: event.challenge }))
      return
    }
    // webhook-id is the same on every retry: a real receiver deduplicates on it.
    console.log(`${event.name} ${request.headers["webhook-id"]} (signature verified)`)
    console.log(JSON.stringify(event.data, null, 2))
    response.writeHead(204).end()
  })
}).listen(port, "127.0.0.1", () => console.log(`Receiving signed events on http://127.0.0.1:${port}/events`))
