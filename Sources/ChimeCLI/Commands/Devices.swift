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
                for (index, device) in devices.enumerated() {
                    cli.write(try describeDevice(device, field: "[\(index)]"))
                }
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
                let body: JSONObject = [
                    JSONFieldName.Device.apps: arguments.has("all-apps") ? .null : .array(apps.map(JSONValue.string))
                ]
                let response = try await client.send(
                    .updateWebPushSubscription, ["id": arguments.positionals[1]], json: .object(body))
                if arguments.has("json") {
                    cli.printJSON(response.json ?? .null)
                    return 0
                }
                cli.write(try response.json.map { try describeDevice($0) } ?? "Done.")
            case "rename":
                guard arguments.positionals.count == 3 else {
                    throw UsageError("give the device's id and its new name: chime devices rename ID NAME")
                }
                let response = try await client.send(
                    .updateWebPushSubscription, ["id": arguments.positionals[1]],
                    json: .object([JSONFieldName.Device.name: .string(arguments.positionals[2])]))
                if arguments.has("json") {
                    cli.printJSON(response.json ?? .null)
                    return 0
                }
                cli.write(try response.json.map { try describeDevice($0) } ?? "Done.")
            default:
                guard arguments.positionals.count == 2 else {
                    throw UsageError("give the device's id: chime devices remove ID")
                }
                try await client.send(.removeWebPushSubscription, ["id": arguments.positionals[1]])
                if arguments.has("json") {
                    cli.printJSON([JSONFieldName.removed: .string(arguments.positionals[1])])
                    return 0
                }
                cli.write("Removed \(arguments.positionals[1]); it gets no more pushes.")
            }
            return 0
        })

    /// One line for a subscribed device (an item of `GET /v1/web-push/subscriptions`, or the answer of
    /// a change), read as ``WebPushSubscription/init(json:field:)`` reads it: id, name, push service,
    /// apps, last outcome.
    ///
    /// ```swift
    /// CLI.describeDevice(item)  // "q3X9…  Phone  https://fcm.googleapis.com  apps: every app"
    /// ```
    static func describeDevice(_ json: JSONValue, field: String = "") throws -> String {
        let device = try readAnswer("device") { () throws(ChimeError) in
            try WebPushSubscription(json: json, field: field)
        }
        let name = device.name.isEmpty ? "(unnamed)" : device.name
        let apps = device.apps.map { $0.isEmpty ? "none" : $0.joined(separator: ", ") } ?? "every app"
        var line = "\(device.id)  \(name)  \(device.pushService ?? "?")  apps: \(apps)"
        if let success = device.lastSuccess { line += "  last sent: \(JSONMapping.formatDate(success))" }
        if let failure = device.lastFailure {
            line += "  last failure: \(JSONMapping.formatDate(failure)) (\(device.lastFailureReason ?? "?"))"
        }
        return line
    }
}
