import ChimeCore
import ChimeCrypto
import ChimeHTTP
import ChimeServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension CLI {
    static let receipt = Command(
        name: "receipt",
        summary:
            "what became of an escalating notification: alerts so far, whether, when, how and where it was answered",
        usage: "chime receipt [--app APP] NOTIFICATION_ID [--json]",
        examples: ["chime receipt wake", "chime receipt wake --json"],
        options: [.value("app", "the app (default: the only registered app)")],
        run: { arguments, cli in
            guard arguments.positionals.count == 1 else { throw UsageError("give the notification's identifier") }
            let identifier = arguments.positionals[0]
            let client = try cli.client(arguments)
            let app = try await cli.app(arguments, client)
            let response = try await client.send(.receipt, ["app": app, "identifier": identifier])
            guard let answer = response.json else { throw CommandError("the service answered without a receipt") }
            if arguments.has("json") {
                cli.printJSON(answer)
                return 0
            }
            let receipt: EscalationReceipt
            do throws(ChimeError) { receipt = try EscalationReceipt(json: answer) } catch {
                throw CommandError("the service's receipt is not readable: \(error.message)")
            }
            let text = { (date: Date) in JSONMapping.json(date).stringValue ?? "?" }
            let alerts = receipt.alerts
            let state: String
            if receipt.acknowledged {
                let action = receipt.actionIdentifier ?? "?"
                let how =
                    action == UNNotificationDefaultActionIdentifier
                    ? "opened"
                    : action == UNNotificationDismissActionIdentifier ? "dismissed" : "answered with \(action)"
                state =
                    "\(how) at \(receipt.acknowledgedAt.map(text) ?? "?")" + (receipt.surface.map { " (\($0))" } ?? "")
            } else if let removed = receipt.removedAt {
                state = "removed unanswered at \(text(removed))"
            } else if receipt.expired {
                state = "not answered: its escalation ended at \(text(receipt.endsAt))"
            } else {
                state = "not answered yet; next alert \(receipt.nextAlertAt.map(text) ?? "?")"
            }
            cli.write(
                "\(identifier): \(state); alerted \(alerts) time\(alerts == 1 ? "" : "s"), last at \(text(receipt.lastAlertedAt))."
            )
            return 0
        })
}
