import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    static let remove = Command(
        name: "remove", summary: "remove pending requests (by --id, or --all)",
        usage: "chime remove [--app APP] (--id ID ... | --all)",
        examples: ["chime remove --id Alarm", "chime remove --all --app com.example.alarm"],
        options: [
            .value("app", "the app (default: the only registered app)"),
            .value("id", "a request identifier (repeatable)", repeatable: true),
            .flag("all", "remove every pending request of the app"),
        ],
        run: { arguments, cli in
            let ids = arguments.all("id") + arguments.positionals
            guard !ids.isEmpty || arguments.has("all") else {
                throw UsageError("say which: --id ID (repeatable) or --all")
            }
            guard ids.isEmpty || !arguments.has("all") else { throw UsageError("give --id or --all, not both") }
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            // The service takes at most 128 query arguments a call: remove in batches of 100.
            var removed: [String] = []
            for start in stride(from: 0, to: max(ids.count, 1), by: 100) {
                let batch = Array(ids[start..<min(ids.count, start + 100)])
                let response = try await client.send(
                    .removeRequests, ["app": app], query: query(batch.map { ("identifier", $0) }))
                let answer = response.json
                removed += try readAnswer("removal") { () throws(ChimeError) in
                    try JSONMapping.removedIdentifiers(answer)
                }
            }
            if arguments.has("json") {
                cli.printJSON([JSONFieldName.removed: .array(removed.map(JSONValue.string))])
                return 0
            }
            cli.write(removed.isEmpty ? "Nothing removed." : "Removed \(removed.joined(separator: ", ")).")
            return 0
        })
}
