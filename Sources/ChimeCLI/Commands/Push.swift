import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    static let push = Command(
        name: "push", summary: "send a remote notification from an APNs payload or an iOS Simulator .apns file",
        usage: "chime push FILE.apns [--app APP]",
        examples: ["chime push drink.apns", "chime push payload.json --app com.example.drinks"],
        options: [
            .value("app", "the app (default: the file's \"Simulator Target Bundle\", else the only registered app)"),
            .value("collapse-id", "replace the delivered notification with this identifier"),
        ],
        run: { arguments, cli in
            guard arguments.positionals.count == 1 else { throw UsageError("give one payload file") }
            let file = arguments.positionals[0]
            let data = try readFile(file, what: "the payload file")
            let decoded: APNsPayload
            do { decoded = try APNsPayload.decode(data) } catch let error as APNsPayloadError {
                throw CommandError(
                    "\(file): \(error.reason): \(error.message)\(error.field.map { " (field: \($0))" } ?? "")")
            }
            let client = try cli.client(arguments)
            var app = arguments.value("app") ?? decoded.simulatorTargetBundle
            if app == nil { app = try await cli.app(arguments, client) }
            guard let app else { throw UsageError("give --app") }
            let answer = try await client.send(.deviceToken, ["app": app]).json ?? .null
            let token = try readAnswer("device token") { () throws(ChimeError) in
                try AppRecord.deviceToken(json: answer).token
            }
            var headers = ["apns-topic": app, "apns-push-type": decoded.isContentAvailable ? "background" : "alert"]
            if let collapse = arguments.value("collapse-id") { headers["apns-collapse-id"] = collapse }
            let response = try await client.send(.push, ["token": token], body: data, headers: headers)
            cli.write("Pushed to \(app): apns-id \(response.headers["apns-id"] ?? "?").")
            return 0
        })
}
