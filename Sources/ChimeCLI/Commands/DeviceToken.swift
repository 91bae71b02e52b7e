import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    static let deviceToken = Command(
        name: "device-token",
        summary:
            "an app's device token for APNs providers; register or unregister it as registerForRemoteNotifications does",
        usage: "chime device-token [register|unregister] [--app APP]",
        examples: [
            "chime device-token --app com.example.chat", "chime device-token unregister --app com.example.chat",
            "chime device-token register --app com.example.chat --json",
        ],
        options: [.value("app", "the app (default: the only registered app)")],
        notes: [
            "After unregister, a push to the token is answered 410 Unregistered with the time of unregistering;",
            "register takes pushes again, with the same token.",
        ],
        run: { arguments, cli in
            let routes: [String: APIRoute] = ["register": .registerDevice, "unregister": .unregisterDevice]
            let action = arguments.positionals.first
            guard arguments.positionals.count <= 1, action.map({ routes[$0] != nil }) ?? true else {
                throw UsageError("say register or unregister, or nothing to show the token")
            }
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let response = try await client.send(action.flatMap { routes[$0] } ?? .deviceToken, ["app": app])
            if arguments.has("json") {
                cli.printJSON(response)
                return 0
            }
            let (token, unregistered) = try readAnswer("device token") { () throws(ChimeError) in
                try AppRecord.deviceToken(json: response.json ?? .null)
            }
            if let since = unregistered.map(JSONMapping.formatDate) {
                cli.write(
                    "\(app): device token \(token), unregistered since \(since): pushes to it get 410 Unregistered.")
            } else {
                cli.write("\(app): device token \(token), registered.")
            }
            return 0
        })
}
