import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    static let status = Command(
        name: "status", summary: "say whether the service runs, where, and what it holds",
        usage: "chime status [--data DIR] [--json]", examples: ["chime status", "chime status --json"],
        options: [],
        run: { arguments, cli in
            let client = try cli.client(arguments)
            let health = try await client.send(.health, allowing: [503])
            let apps = try appRecords(try await client.list(.listApps)).map(\.bundleIdentifier)
            if arguments.has("json") {
                cli.write(
                    JSONValue.object([
                        "url": .string(client.location), "healthy": .bool(health.status == 200),
                        "apps": .array(apps.map(JSONValue.string)),
                    ]).serialized(pretty: true))
                return health.status == 200 ? 0 : 1
            }
            cli.write(
                "Chime service at \(client.location): \(health.status == 200 ? "running" : "unhealthy (HTTP \(health.status))")"
            )
            cli.write(
                "Apps: \(apps.isEmpty ? "none" : apps.joined(separator: ", "))"
            )
            return health.status == 200 ? 0 : 1
        })
}
