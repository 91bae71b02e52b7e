import Chime
import ExampleApps
import Foundation

// The drinking-reminder tutorial's app: a local reminder and the same category from an APNs payload.
// The app runs "in the background" (as when iOS launches it for an action), so notifications are
// shown as their content says, and answers are written to a log file in the app's data directory.
let terminal = ExampleTerminal()
let center = terminal.center
center.isAppInForeground = false
let logURL = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("chime-drinking-reminder-log.jsonl")
let app = DrinkingReminderApp(logURL: logURL)
app.onAnswer = { answer in
    print(
        "(logged: \(answer.kind.rawValue); glasses so far \(app.glassesDrunk), not thirsty \(app.timesNotThirsty), dismissed \(app.timesDismissed))"
    )
}
app.launch()
app.scheduleReminder(in: 5)

await terminal.say(
    """
    Drinking reminder example. Answers so far (from \(logURL.path)): \(app.glassesDrunk) glasses, \
    \(app.timesNotThirsty) not thirsty, \(app.timesDismissed) dismissed.
    A local reminder comes in 5 s. Commands:
      push    a backend sends the same reminder as an APNs payload
      lock    the device locks: the app cannot write its log; answers wait in Chime's outbox
      unlock  the log can be written again: the waiting answers are handed over
      q       quit
    Answer a reminder by its number; Dismiss reaches the app too (the category has customDismissAction).
    """)

await terminal.run { command in
    switch command {
    case "push":
        do {
            // Stands in for a backend sending the payload through APNs.
            try await center.deliverRemoteNotification(
                DrinkingReminderApp.remotePayload,
                identifier: "remote-\(UUID().uuidString.prefix(8))")
        } catch {
            print("push failed: \(error)")
        }
    case "lock":
        app.protectedDataWillBecomeUnavailable()
        print("(locked: answers now wait in the outbox)")
    case "unlock":
        print("(unlocked)")
        app.protectedDataDidBecomeAvailable()
    default:
        return false
    }
    return true
}
