// A helper for the crash tests in Tests/ChimeSQLiteTests/EngineCrashTests.swift.
//
//   ChimeEngineCrasher fire STORE COUNT   schedules COUNT notifications due 3 ms apart (first run
//                                         only), fires them on the real clock, 8 a transaction at
//                                         most 200 a second, prints "fired" for each delivery and
//                                         "done" when nothing is pending. Killed and restarted by
//                                         the test once it has fired some.
//   ChimeEngineCrasher outbox STORE PHASE  answer: delivers a notification, the user taps it, the
//                                         delegate prints "received" and never completes (the test
//                                         kills it); resume/again: a delegate that completes; prints
//                                         "received ..." for each response handed over, then "finished".
//   ChimeEngineCrasher escalate STORE COUNT  delivers COUNT notifications that escalate every 50 ms
//                                         for 8 s (first run only), takes the steps on the real
//                                         clock, prints "alerted" for each realerted event and
//                                         "done" when every escalation ended.
import Chime
import ChimeCore
import ChimeSQLite
import ChimeTesting
import Foundation

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
func fail(_ line: String) -> Never {
    FileHandle.standardError.write(Data((line + "\n").utf8))
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    fail("usage: ChimeEngineCrasher fire STORE COUNT | outbox STORE answer|resume|again | escalate STORE COUNT")
}

@MainActor
final class Delegate: UNUserNotificationCenterDelegate {
    let completes: Bool
    init(completes: Bool) { self.completes = completes }
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        say("received \(response.notification.request.identifier) \(response.actionIdentifier)")
        if completes { completionHandler() }
    }
}

/// The async `add` (top-level code would pick the completion-handler form).
func schedule(_ request: UNNotificationRequest, on center: UNUserNotificationCenter) async throws {
    try await center.add(request)
}

/// An engine on the store at `path` on the real clock, firing in small transactions at most 200 a
/// second: what a restarted run finds overdue takes many firing transactions, so the test's kill
/// lands between or inside them, not after the end.
func crashableEngine(_ path: String, _ configure: (inout NotificationEngine.Configuration) -> Void = { _ in })
    -> NotificationEngine
{
    var configuration = NotificationEngine.Configuration()
    configuration.eventRetention = 1_000_000
    configuration.fireBatch = 8
    configuration.firingInterval = 0.005
    configure(&configuration)
    do {
        return NotificationEngine(
            store: try SQLiteStore(path: path), policy: FixedAuthorizationPolicy(.grant), configuration: configuration)
    } catch { fail("\(error)") }
}

switch arguments[1] {
case "fire":
    guard let count = Int(arguments[3]) else { fail("COUNT must be a number") }
    let engine = crashableEngine(arguments[2])
    let app = "com.example.fire"
    let pending = try await engine.pendingCount()
    let delivered = try await engine.deliveredCount()
    if pending == 0 && delivered == 0 {
        _ = try await engine.requestAuthorization(app: app, options: [.alert])
        let requests = (0..<count).map { index in
            NotificationRequest(
                identifier: "occurrence-\(index)", content: NotificationContent(title: "Occurrence \(index)"),
                trigger: .timeInterval(0.05 + Double(index) * 0.003, repeats: false))
        }
        try await engine.add(requests, app: app)
        say("scheduled")
    }
    _ = engine.subscribe(app: app) { event in if event.delivery != nil { say("fired") } }
    engine.startScheduler()
    while try await engine.pendingCount() > 0 {
        try await Sleep.for(.milliseconds(20))
    }
    say("done")
    exit(0)

case "escalate":
    guard let count = Int(arguments[3]) else { fail("COUNT must be a number") }
    let engine = crashableEngine(arguments[2]) {
        $0.escalationLimits = EscalationLimits(minimumInterval: 0.01, maximumDuration: 60)
    }
    let app = "com.example.escalate"
    let identifiers = (0..<count).map { "alarm-\($0)" }
    if try await engine.deliveredCount() == 0 {
        _ = try await engine.requestAuthorization(app: app, options: [.alert])
        try await engine.add(
            identifiers.map { identifier in
                NotificationRequest(
                    identifier: identifier, content: NotificationContent(title: identifier),
                    escalation: NotificationEscalation(every: 0.05, for: 8))
            }, app: app)
        say("scheduled")
    }
    _ = engine.subscribe(app: app) { event in if event.kind == .realerted { say("alerted") } }
    engine.startScheduler()
    while true {
        var escalating = false
        for identifier in identifiers
        where try await engine.receipt(app: app, notification: identifier)?.isEscalating != false {
            escalating = true
        }
        if !escalating { break }
        try await Sleep.for(.milliseconds(20))
    }
    say("done")
    exit(0)

case "outbox":
    let simulator = try NotificationSimulator(
        bundleIdentifier: "com.example.outbox", now: Date(timeIntervalSince1970: 1_780_000_000),
        timeZone: TimeZone(identifier: "UTC")!, storePath: arguments[2])
    let center = simulator.center
    switch arguments[3] {
    case "answer":
        let delegate = Delegate(completes: false)
        center.delegate = delegate
        _ = try await center.requestAuthorization(options: [.alert])
        let content = UNMutableNotificationContent()
        content.title = "Drink water"
        try await schedule(UNNotificationRequest(identifier: "drink", content: content, trigger: nil), on: center)
        await simulator.advance(by: 0)
        Task { try await simulator.tap("drink") }  // never completes: the delegate never calls back
        try await Sleep.for(.seconds(60))
        fail("the test did not kill the process")
    case "resume", "again":
        let delegate = Delegate(completes: true)
        center.delegate = delegate
        await simulator.advance(by: 0)
        say("finished")
        withExtendedLifetime(delegate) {}
        exit(0)
    default:
        fail("unknown phase \(arguments[3])")
    }

default:
    fail("unknown mode \(arguments[1])")
}
