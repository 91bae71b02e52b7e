import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    // MARK: devices

    static let devices = Command(
        name: "devices",
        summary: "browsers and phones subscribed to Web Push: list them, choose their apps, name or remove them",
        usage:
            "chime devices [list] | chime devices apps ID [APP…] [--all-apps] | chime devices rename ID NAME | chime devices remove ID",
        examples: [
            "chime devices", "chime devices list --json",
            "chime devices apps q3X9… com.example.alarm com.example.organizer",
            "chime devices apps q3X9… --all-apps", "chime devices rename q3X9… 'Anna’s phone'",
            "chime devices remove q3X9…",
        ],
        options: [.flag("all-apps", "with apps: the device gets every app's notifications")],
        run: { arguments, cli in
            let action = arguments.positionals.first ?? "list"
            let actions = ["list", "apps", "rename", "remove"]
            guard actions.contains(action) else {
                let suggestion = ParsedArguments.closest(action, among: actions).map { "; did you mean '\($0)'?" } ?? ""
                throw UsageError("unknown action '\(action)'\(suggestion)")
            }
            let client = try cli.client(arguments)
            switch action {
            case "list":
                guard arguments.positionals.count <= 1 else {
                    throw UsageError("chime devices list takes no arguments")
                }
                let devices = try await client.list(.listWebPushSubscriptions)
                if arguments.has("json") {
                    cli.printJSON(devices)
                    return 0
                }
                if devices.isEmpty {
                    cli.write(
                        "No devices. In the web center (chime open), press \"Notify this device\" on a phone or browser."
                    )
                }
                for device in devices { cli.write(describeDevice(device)) }
            case "apps":
                guard arguments.positionals.count >= 2 else {
                    throw UsageError("give the device's id (from chime devices) and its apps, or --all-apps")
                }
                let apps = Array(arguments.positionals.dropFirst(2))
                guard apps.isEmpty == arguments.has("all-apps") else {
                    throw UsageError(
                        apps.isEmpty
                            ? "name the apps the device gets, or give --all-apps"
                            : "give the apps or --all-apps, not both")
                }
                let body: JSONObject = ["apps": arguments.has("all-apps") ? .null : .array(apps.map(JSONValue.string))]
                let response = try await client.send(
                    .updateWebPushSubscription, ["id": arguments.positionals[1]], json: .object(body))
                if arguments.has("json") {
                    cli.printJSON(response.json ?? .null)
                    return 0
                }
                cli.write(response.json.map(describeDevice) ?? "Done.")
            case "rename":
                guard arguments.positionals.count == 3 else {
                    throw UsageError("give the device's id and its new name: chime devices rename ID NAME")
                }
                let response = try await client.send(
                    .updateWebPushSubscription, ["id": arguments.positionals[1]],
                    json: .object(["name": .string(arguments.positionals[2])]))
                if arguments.has("json") {
                    cli.printJSON(response.json ?? .null)
                    return 0
                }
                cli.write(response.json.map(describeDevice) ?? "Done.")
            default:
                guard arguments.positionals.count == 2 else {
                    throw UsageError("give the device's id: chime devices remove ID")
                }
                try await client.send(.removeWebPushSubscription, ["id": arguments.positionals[1]])
                if arguments.has("json") {
                    cli.printJSON(["removed": .string(arguments.positionals[1])])
                    return 0
                }
                cli.write("Removed \(arguments.positionals[1]); it gets no more pushes.")
            }
            return 0
        })

    /// One line for a subscribed device: id, name, push service, apps, last outcome.
    static func describeDevice(_ device: JSONValue) -> String {
        let name = device["name"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "(unnamed)"
        var apps = "every app"
        if case .array(let list)? = device["apps"] {
            apps = list.isEmpty ? "none" : list.compactMap(\.stringValue).joined(separator: ", ")
        }
        var line =
            "\(device["id"]?.stringValue ?? "?")  \(name)  \(device["pushService"]?.stringValue ?? "?")  apps: \(apps)"
        if let success = device["lastSuccess"]?.stringValue { line += "  last sent: \(success)" }
        if let failure = device["lastFailure"]?.stringValue {
            line += "  last failure: \(failure) (\(device["lastFailureReason"]?.stringValue ?? "?"))"
        }
        return line
    }
}
