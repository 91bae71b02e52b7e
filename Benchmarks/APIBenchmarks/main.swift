// chime-bench-api: Chime as an app uses it — `UNUserNotificationCenter` and its delegate — and the
// cost of one delivery on its way to the delegate and to attached surfaces, in process and through
// a `chime serve` service. Measured against a plain C loop inserting rows of the same shape into
// SQLite in one transaction, in the same run.
//
//   chime-bench-api [--dir DIR] [--count N] [--burst N] [--deliveries N] [--quick] [--only NAME[,NAME]]
//                   [--reference PATH] [--json FILE] [--realistic-shape interval|attachment]
//
// Names: api-concurrent, api-realistic (the realistic add path: requests built as an app builds
// them, inside the timed region, through `UNUserNotificationCenter.current()`), api-burst,
// api-steady, cost (cost per delivery: delegate, surfaces for 1, 10 and 100 apps, through the service).
// Prints progress on stderr and a table on stdout; --json merges the figures into FILE under "api".
import BenchmarkSupport
import Chime
import ChimeCore
import ChimeHTTP
import ChimeSQLite
import ChimeServer
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

struct Options {
    var dir = FileManager.default.temporaryDirectory.appendingPathComponent("chime-bench-api").path
    var count = 200_000
    var burst = 100_000
    var deliveries = 20_000
    var rate = 10_000
    var seconds = 60
    var only: Set<String> = []
    var reference: String?
    var json: String?
    /// Where api-steady writes each delivery's due offset and lateness (CSV), for profiling.
    var trace: String?
    /// Which shapes api-realistic runs (both by default; one alone to profile it).
    var realisticShapes: Set<String> = ["interval", "attachment"]

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var iterator = arguments.dropFirst().makeIterator()
        func value(_ flag: String) -> String {
            guard let value = iterator.next() else { fail("\(flag) needs a value") }
            return value
        }
        func number(_ flag: String) -> Int {
            let text = value(flag)
            guard let number = Int(text), number > 0 else { fail("\(flag) needs a positive whole number, not \(text)") }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "--dir": options.dir = value(argument)
            case "--count": options.count = number(argument)
            case "--burst": options.burst = number(argument)
            case "--deliveries": options.deliveries = number(argument)
            case "--rate": options.rate = number(argument)
            case "--seconds": options.seconds = number(argument)
            case "--only": options.only = Set(value(argument).split(separator: ",").map(String.init))
            case "--reference": options.reference = value(argument)
            case "--json": options.json = value(argument)
            case "--trace": options.trace = value(argument)
            case "--realistic-shape":
                let shape = value(argument)
                guard ["interval", "attachment"].contains(shape) else {
                    fail("--realistic-shape is interval or attachment, not \(shape)")
                }
                options.realisticShapes = [shape]
            case "--quick":
                options.count = 50_000
                options.burst = 20_000
                options.deliveries = 5_000
                options.seconds = 10
            case "-h", "--help":
                print(
                    "usage: chime-bench-api [--dir DIR] [--count N] [--burst N] [--deliveries N] [--rate R] [--seconds S] [--quick] [--only api-concurrent,api-realistic,api-burst,api-steady,cost] [--reference PATH] [--json FILE] [--trace FILE (api-steady: due offset s, lateness ms per delivery)] [--realistic-shape interval|attachment (api-realistic: one shape alone)]"
                )
                exit(0)
            default: fail("unknown argument \(argument); see --help")
            }
        }
        return options
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("chime-bench-api: \(message)\n".utf8))
    exit(1)
}

/// Progress on stderr: redrawn in place on a terminal, plain lines in a log (ChimeCore).
let progress = ProgressLine()

/// Waits until what earlier measurements wrote has reached the disk (`sync`), so one part's
/// write-back does not land in the next part's figures.
func settleDisk() {
    progress.update("waiting for earlier writes to reach the disk", force: true)
    sync()
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// CPU time this process has used (user + system), in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

func freshDirectory(_ options: Options, _ name: String) throws -> String {
    let path = options.dir + "/" + name
    try? FileManager.default.removeItem(atPath: path)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A trigger that fires at exactly `date`: a calendar trigger with every component down to the
/// nanosecond, in UTC (what an app does with `UNCalendarNotificationTrigger`).
func exactly(_ date: Date) -> UNCalendarNotificationTrigger {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    var components = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
    components.timeZone = calendar.timeZone
    return UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
}

/// New content with a reminder's title, body, default sound, category and `thread`.
func reminderContent(_ index: Int, thread: String) -> UNMutableNotificationContent {
    let content = UNMutableNotificationContent()
    content.title = "Reminder \(index)"
    content.body = "Time to stretch, drink some water and look away from the screen."
    content.sound = .default
    content.categoryIdentifier = "reminder"
    content.threadIdentifier = thread
    return content
}

/// The request an app makes: a title, a body, a sound, a category, a thread and ~200 bytes of
/// user info, as the engine benchmark's workload.
func makeRequest(_ index: Int, prefix: String, trigger: UNNotificationTrigger) -> UNNotificationRequest {
    let content = reminderContent(index, thread: "thread-\(index % 16)")
    content.userInfo = [
        "taskID": "task-\(index)", "list": "Personal errands and weekly chores", "priority": index % 5,
        "tags": ["health", "daily", "focus"], "note": String(repeating: "n", count: 80),
    ]
    return UNNotificationRequest(identifier: "\(prefix)-\(index)", content: content, trigger: trigger)
}

let reminderCategory = UNNotificationCategory(
    identifier: "reminder",
    actions: [
        UNNotificationAction(identifier: "done", title: "Done", options: []),
        UNTextInputNotificationAction(
            identifier: "note", title: "Add a note", options: [], textInputButtonTitle: "Save",
            textInputPlaceholder: "A note"),
    ],
    intentIdentifiers: [], options: [.customDismissAction])

/// Counts what reaches it and completes ``allArrived`` at the expected count; records when each
/// arrived relative to its due date.
final class Arrivals: Sendable {
    private struct State {
        var count = 0
        var lateness: [Double] = []
        var dues: [Date] = []
        var last = Date.distantPast
    }
    let expected: Int
    private let state = Mutex(State())
    private let allArrived = Completion()

    init(expected: Int) { self.expected = expected }

    func record(due: Date?) {
        let now = Date()
        let count = state.withLock { state -> Int in
            state.count += 1
            if let due {
                state.lateness.append(now.timeIntervalSince(due))
                state.dues.append(due)
            }
            state.last = now
            return state.count
        }
        if count >= expected { allArrived.complete() }
    }

    var count: Int { state.withLock { $0.count } }
    var last: Date { state.withLock { $0.last } }
    var lateness: [Double] { state.withLock { $0.lateness } }
    /// Each delivery's due date and lateness, in the order they arrived.
    var series: [(due: Date, lateness: Double)] { state.withLock { Array(zip($0.dues, $0.lateness)) } }

    /// Waits until every expected delivery has arrived, or fails the benchmark at `deadline` saying
    /// how many did and how many `pending` (asked then) says are still waiting in the store: a
    /// measurement that lost deliveries must not hang, nor report a figure.
    func wait(label: String, deadline: Date, pending: @escaping @MainActor () async -> Int) async {
        let expected = self.expected
        let arrived = await allArrived.wait(until: deadline) {
            progress.update("\(label): \(self.count.formatted())/\(expected.formatted())")
        }
        guard !arrived else { return }
        let arrivedCount = count
        let waiting = await pending()
        fail(
            "\(label): \(arrivedCount.formatted()) of \(expected.formatted()) deliveries arrived by \(deadline.formatted(.iso8601)); \(waiting.formatted()) requests still pending (\((expected - arrivedCount - waiting).formatted()) neither pending nor arrived)"
        )
    }
}

/// Fails the benchmark when scheduling ended after `due`, the first exact date it scheduled: a
/// calendar request added after its date never fires (as on iOS), so its delivery would never
/// arrive and the figure would be wrong. The machine was too busy for the margin `dueInstant` gave.
func checkScheduled(before due: Date, label: String) {
    let late = Date().timeIntervalSince(due)
    if late >= 0 {
        fail(
            String(
                format:
                    "%@: scheduling ended %.2f s after the first request was due; nothing measured (a busy machine?)",
                label, late))
    }
}

/// The app's delegate: in front, it shows every notification as a banner with sound and counts it.
final class CountingDelegate: UNUserNotificationCenterDelegate, Sendable {
    let arrivals: Arrivals
    init(_ arrivals: Arrivals) { self.arrivals = arrivals }
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
        -> UNNotificationPresentationOptions
    {
        arrivals.record(due: notification.date)
        return [.banner, .list, .sound]
    }
}

/// A surface that counts what it is asked to show.
struct CountingSurface: NotificationSurface {
    let arrivals: Arrivals
    func show(_ delivery: Delivery, app: String) async {
        arrivals.record(due: delivery.notification.date)
    }
    func withdraw(_ identifiers: [String], app: String) async {}
}

/// One app's center on its own SQLite store, as `UNUserNotificationCenter.current()` makes it (no
/// event log: that is for the service's resumable streams).
func embeddedCenter(_ directory: String, app: String) throws -> (UNUserNotificationCenter, NotificationEngine) {
    var configuration = NotificationEngine.Configuration()
    configuration.recordsEvents = false
    let engine = NotificationEngine(
        store: try SQLiteStore(path: directory + "/\(app).sqlite"), policy: FixedAuthorizationPolicy(.grant),
        configuration: configuration)
    let center = UNUserNotificationCenter(
        engine: engine, bundleIdentifier: app, timeZone: .current, driven: false, foreground: true)
    return (center, engine)
}

/// Adds `requests` through the center with `inFlight` adds outstanding at a time.
func addConcurrently(
    _ center: UNUserNotificationCenter, _ requests: [UNNotificationRequest], inFlight: Int, label: String
) async throws {
    let next = Counter()
    let box = RequestsBox(requests)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<inFlight {
            group.addTask {
                while true {
                    let index = next.value.add(1, ordering: .relaxed).oldValue
                    guard index < box.requests.count else { return }
                    try await center.add(box.requests[index])
                    if index % 2000 == 0 {
                        progress.update("\(label): \(index.formatted())/\(box.requests.count.formatted())")
                    }
                }
            }
        }
        try await group.waitForAll()
    }
}

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// `UNNotificationRequest` is a class shared read-only across the adding tasks.
final class RequestsBox: @unchecked Sendable {
    // `@unchecked Sendable`: never mutated after init; the requests are only read.
    let requests: [UNNotificationRequest]
    init(_ requests: [UNNotificationRequest]) { self.requests = requests }
}

/// A due instant far enough ahead for `count` adds to finish first.
func dueInstant(after count: Int, perSecond: Double) -> Date {
    Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3 + Double(count) / perSecond).rounded(.up))
}

// MARK: - Measurements

struct Figure {
    var name: String
    var value: String
    var target: String = ""
    var met: Bool?
    var ratio: String = ""
}

var figures: [Figure] = []
var results: [String: Any] = [:]

/// Concurrent single adds through `UNUserNotificationCenter.add`, 64 in flight.
@MainActor func benchAPIConcurrent(_ options: Options, reference: Double?) async throws {
    let directory = try freshDirectory(options, "api-concurrent")
    let (center, engine) = try embeddedCenter(directory, app: "com.example.bench")
    _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    let due = Date().addingTimeInterval(86_400)
    let requests = (0..<options.count).map {
        makeRequest($0, prefix: "single", trigger: exactly(due.addingTimeInterval(Double($0))))
    }
    let start = ContinuousClock.now
    let cpu = cpuSeconds()
    try await addConcurrently(center, requests, inFlight: 64, label: "api concurrent adds")
    let seconds = (ContinuousClock.now - start).seconds
    let cpuPerAdd = (cpuSeconds() - cpu) / Double(options.count)
    let rate = Double(options.count) / seconds
    progress.done(
        "api concurrent adds: \(options.count.formatted()) in \(String(format: "%.2f", seconds)) s, \(String(format: "%.1f", cpuPerAdd * 1e6)) µs CPU each"
    )
    results["apiConcurrentCPUMicroseconds"] = cpuPerAdd * 1e6
    await engine.shutdown()
    let ratio = reference.map { rate / $0 }
    figures.append(
        Figure(
            name: "concurrent single adds through UNUserNotificationCenter (64 in flight)",
            value: "\(Int(rate).formatted()) /s",
            target: "≥ 0.35 × C loop", met: ratio.map { $0 >= 0.35 },
            ratio: ratio.map { String(format: "%.2f", $0) } ?? ""))
    results["apiConcurrentPerSecond"] = rate
}

/// `burst` requests due at one calendar instant, counted in the delegate's `willPresent` with the
/// app in front.
@MainActor func benchAPIBurst(_ options: Options, reference: Double?) async throws {
    let directory = try freshDirectory(options, "api-burst")
    let (center, engine) = try embeddedCenter(directory, app: "com.example.bench")
    let arrivals = Arrivals(expected: options.burst)
    let delegate = CountingDelegate(arrivals)
    center.delegate = delegate
    _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    center.setNotificationCategories([reminderCategory])
    let due = dueInstant(after: options.burst, perSecond: 20_000)
    progress.update("api burst: scheduling \(options.burst.formatted())", force: true)
    let requests = (0..<options.burst).map { makeRequest($0, prefix: "burst", trigger: exactly(due)) }
    try await addConcurrently(center, requests, inFlight: 64, label: "api burst: scheduling")
    checkScheduled(before: due, label: "api burst")
    try await Sleep.seconds(due.timeIntervalSinceNow - 0.05)
    let cpu = cpuSeconds()
    await arrivals.wait(label: "api burst: in willPresent", deadline: due.addingTimeInterval(60)) {
        await center.pendingNotificationRequests().count
    }
    let seconds = arrivals.last.timeIntervalSince(due)
    results["apiBurstCPUMicroseconds"] = (cpuSeconds() - cpu) / Double(options.burst) * 1e6
    progress.done(
        "api burst: \(options.burst.formatted()) reached willPresent \(String(format: "%.0f ms", seconds * 1000)) after they were due, \(String(format: "%.1f", results["apiBurstCPUMicroseconds"] as? Double ?? 0)) µs CPU each"
    )
    await engine.shutdown()
    let rate = Double(options.burst) / seconds
    let ratio = reference.map { rate / $0 }
    figures.append(
        Figure(
            name: "\(options.burst.formatted()) due at one instant → all in the delegate's willPresent",
            value: String(format: "%.2f s (%@ /s)", seconds, Int(rate).formatted()),
            target: "≥ 0.50 × C loop", met: ratio.map { $0 >= 0.50 },
            ratio: ratio.map { String(format: "%.2f", $0) } ?? ""))
    results["apiBurstSeconds"] = seconds
    withExtendedLifetime(delegate) {}
}

/// Steady firing at `rate`/s for `seconds` s: lateness in the delegate.
@MainActor func benchAPISteady(_ options: Options) async throws {
    let directory = try freshDirectory(options, "api-steady")
    let (center, engine) = try embeddedCenter(directory, app: "com.example.bench")
    let total = options.rate * options.seconds
    let arrivals = Arrivals(expected: total)
    let delegate = CountingDelegate(arrivals)
    center.delegate = delegate
    _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    // Building the requests and adding them take ~40 µs each here: the first is due after both.
    let start = dueInstant(after: total, perSecond: 15_000)
    let spacing = 1.0 / Double(options.rate)
    let requests = (0..<total).map {
        makeRequest($0, prefix: "steady", trigger: exactly(start.addingTimeInterval(Double($0) * spacing)))
    }
    try await addConcurrently(center, requests, inFlight: 64, label: "api steady: scheduling")
    checkScheduled(before: start, label: "api steady")
    await arrivals.wait(
        label: "api steady: in willPresent at \(options.rate.formatted())/s",
        deadline: start.addingTimeInterval(Double(options.seconds) + 60)
    ) { await center.pendingNotificationRequests().count }
    await engine.shutdown()
    let sorted = arrivals.lateness.sorted()
    func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
    let (p50, p99, max) = (percentile(0.5), percentile(0.99), sorted.last ?? 0)
    if let trace = options.trace {
        var csv = "due_s,lateness_ms\n"
        for sample in arrivals.series {
            csv += String(format: "%.6f,%.3f\n", sample.due.timeIntervalSince(start), sample.lateness * 1000)
        }
        try csv.write(toFile: trace, atomically: true, encoding: .utf8)
    }
    progress.done(
        String(
            format: "api steady: lateness in willPresent p50 %.2f ms p99 %.2f ms max %.2f ms", p50 * 1000, p99 * 1000,
            max * 1000))
    figures.append(
        Figure(
            name:
                "steady \(options.rate.formatted())/s for \(options.seconds) s, lateness in willPresent p50 / p99 / max",
            value: String(format: "%.2f / %.2f / %.2f ms", p50 * 1000, p99 * 1000, max * 1000),
            target: "p99 ≤ 5 ms, max ≤ 20 ms", met: p99 <= 0.005 && max <= 0.020))
    results["apiSteadyP50"] = p50
    results["apiSteadyP99"] = p99
    results["apiSteadyMax"] = max
    withExtendedLifetime(delegate) {}
}

/// What one delivery costs on its way to its consumers: wall time and this process's CPU time from
/// the due instant until the last consumer has it, divided by the number of deliveries.
struct Cost {
    var wall: Double
    var cpu: Double
    var text: String { String(format: "%.1f µs wall, %.1f µs CPU", wall * 1e6, cpu * 1e6) }
}

/// One engine on SQLite with `apps` apps, each with an app's center in the background and a
/// counting surface attached; `deliveries` requests spread over the apps, due at one instant.
@MainActor func costWithSurfaces(_ options: Options, apps: Int) async throws -> Cost {
    let directory = try freshDirectory(options, "cost-surfaces-\(apps)")
    let engine = NotificationEngine(
        store: try SQLiteStore(path: directory + "/chime.sqlite"), policy: FixedAuthorizationPolicy(.grant))
    let arrivals = Arrivals(expected: options.deliveries)
    var centers: [UNUserNotificationCenter] = []
    for index in 0..<apps {
        let center = UNUserNotificationCenter(
            engine: engine, bundleIdentifier: "com.example.app\(index)", timeZone: .current,
            driven: false, foreground: false)
        center.addSurface(CountingSurface(arrivals: arrivals))
        _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
        center.setNotificationCategories([reminderCategory])
        centers.append(center)
    }
    let due = dueInstant(after: options.deliveries, perSecond: 20_000)
    let requests = (0..<options.deliveries).map { makeRequest($0, prefix: "cost", trigger: exactly(due)) }
    for (index, center) in centers.enumerated() {
        let mine = stride(from: index, to: requests.count, by: apps).map { requests[$0] }
        try await addConcurrently(center, mine, inFlight: 64, label: "cost, \(apps) apps: scheduling")
    }
    checkScheduled(before: due, label: "cost, \(apps) apps")
    try await Sleep.seconds(due.timeIntervalSinceNow - 0.05)
    let cpu = cpuSeconds()
    await arrivals.wait(label: "cost, \(apps) apps' surfaces", deadline: due.addingTimeInterval(60)) { [centers] in
        var pending = 0
        for center in centers { pending += await center.pendingNotificationRequests().count }
        return pending
    }
    let cost = Cost(
        wall: arrivals.last.timeIntervalSince(due) / Double(options.deliveries),
        cpu: (cpuSeconds() - cpu) / Double(options.deliveries))
    progress.done("cost per delivery, surfaces of \(apps) apps: \(cost.text)")
    await engine.shutdown()
    withExtendedLifetime(centers) {}
    return cost
}

/// The app's delegate in front, in process: from due to `willPresent`.
@MainActor func costDelegate(_ options: Options) async throws -> Cost {
    let directory = try freshDirectory(options, "cost-delegate")
    let (center, engine) = try embeddedCenter(directory, app: "com.example.bench")
    let arrivals = Arrivals(expected: options.deliveries)
    let delegate = CountingDelegate(arrivals)
    center.delegate = delegate
    _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    center.setNotificationCategories([reminderCategory])
    let due = dueInstant(after: options.deliveries, perSecond: 20_000)
    let requests = (0..<options.deliveries).map { makeRequest($0, prefix: "cost", trigger: exactly(due)) }
    try await addConcurrently(center, requests, inFlight: 64, label: "cost, delegate: scheduling")
    checkScheduled(before: due, label: "cost, delegate")
    try await Sleep.seconds(due.timeIntervalSinceNow - 0.05)
    let cpu = cpuSeconds()
    await arrivals.wait(label: "cost, delegate", deadline: due.addingTimeInterval(60)) {
        await center.pendingNotificationRequests().count
    }
    let cost = Cost(
        wall: arrivals.last.timeIntervalSince(due) / Double(options.deliveries),
        cpu: (cpuSeconds() - cpu) / Double(options.deliveries))
    progress.done("cost per delivery, in-process delegate: \(cost.text)")
    await engine.shutdown()
    withExtendedLifetime(delegate) {}
    return cost
}

/// Through a `chime serve` service (started in this process, so its CPU time counts too): the app's
/// center on `CHIME_SERVICE` with its delegate in front; from due to `willPresent`.
@MainActor func costService(_ options: Options) async throws -> Cost {
    let directory = try freshDirectory(options, "cost-service")
    var configuration = ChimeService.Configuration(
        dataDirectory: directory, listen: .tcp(host: "127.0.0.1", port: 0), autoAllow: true)
    configuration.printsBanner = false
    let service = try await RunningService.start(configuration: configuration, logger: .silent)
    do {
        return try await costService(options, service: service)
    } catch {
        await service.stop()
        throw error
    }
}

@MainActor func costService(_ options: Options, service: RunningService) async throws -> Cost {
    let app = "com.example.bench"
    let token = try await registerApp(app, service: service)
    let backend = ServiceBackend(endpoint: .url(service.url), token: token)
    let center = UNUserNotificationCenter(
        backend: backend, bundleIdentifier: app, timeZone: .current, driven: false, foreground: true)
    let arrivals = Arrivals(expected: options.deliveries)
    let delegate = CountingDelegate(arrivals)
    center.delegate = delegate
    _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        center.setNotificationCategories([reminderCategory]) { error in
            if let error { continuation.resume(throwing: error) } else { continuation.resume() }
        }
    }
    let due = dueInstant(after: options.deliveries, perSecond: 1_500)
    let requests = (0..<options.deliveries).map { makeRequest($0, prefix: "cost", trigger: exactly(due)) }
    try await addConcurrently(center, requests, inFlight: 64, label: "cost, service: scheduling")
    checkScheduled(before: due, label: "cost, through the service")
    try await Sleep.seconds(due.timeIntervalSinceNow - 0.05)
    let cpu = cpuSeconds()
    await arrivals.wait(label: "cost, through the service", deadline: due.addingTimeInterval(60)) {
        await center.pendingNotificationRequests().count
    }
    let cost = Cost(
        wall: arrivals.last.timeIntervalSince(due) / Double(options.deliveries),
        cpu: (cpuSeconds() - cpu) / Double(options.deliveries))
    progress.done("cost per delivery, through the service: \(cost.text)")
    await service.stop()
    withExtendedLifetime((center, delegate)) {}
    return cost
}

/// Registers an app with the owner token and returns the app's token.
func registerApp(_ app: String, service: RunningService) async throws -> String {
    let response = try await HTTPClient(endpoint: .url(service.url)).request(
        "POST", "/v1/apps",
        headers: [("Authorization", "Bearer \(service.ownerToken)"), ("Content-Type", "application/json")],
        body: Array(#"{"bundleIdentifier": "\#(app)"}"#.utf8))
    guard case .string(let token)? = response.json?["token"] else {
        fail("registering \(app) answered \(response.text)")
    }
    return token
}

@MainActor func benchCost(_ options: Options) async throws {
    let delegate = try await costDelegate(options)
    figures.append(
        Figure(
            name: "cost per delivery: in-process delegate (\(options.deliveries.formatted()) due at once)",
            value: delegate.text))
    results["costDelegateWallMicroseconds"] = delegate.wall * 1e6
    results["costDelegateCPUMicroseconds"] = delegate.cpu * 1e6
    for apps in [1, 10, 100] {
        let cost = try await costWithSurfaces(options, apps: apps)
        figures.append(
            Figure(name: "cost per delivery: surfaces of \(apps) app\(apps == 1 ? "" : "s") attached", value: cost.text)
        )
        results["costSurfaces\(apps)WallMicroseconds"] = cost.wall * 1e6
        results["costSurfaces\(apps)CPUMicroseconds"] = cost.cpu * 1e6
    }
    let service: Cost
    do { service = try await costService(options) } catch { fail("through the service: \(error)") }
    figures.append(Figure(name: "cost per delivery: through the service to the app's delegate", value: service.text))
    results["costServiceWallMicroseconds"] = service.wall * 1e6
    results["costServiceCPUMicroseconds"] = service.cpu * 1e6
}

// MARK: - The realistic add path

/// A 160-character note; each add ends it with its own number (``realisticNote(_:)``).
let realisticNoteText =
    "Pick up the dry cleaning on the way home, then call the pharmacy about the refill and ask "
    + "whether the new dosage needs a fresh prescription from the clinic, ok."

/// The note of add `index`: 160 characters, its last ones the index, as an app's text differs per
/// notification.
func realisticNote(_ index: Int) -> String {
    let digits = String(index)
    return String(realisticNoteText.dropFirst(digits.count)) + digits
}

/// The two shapes of the realistic path.
enum RealisticShape {
    /// A time-interval trigger between 1 and 30 days.
    case interval
    /// An image attachment and a calendar trigger (year to minute, 1 to 30 days ahead).
    case attachmentAndCalendar(images: String)
}

/// Request `index` as an app builds it: new content with a title, a body, the default sound, a
/// category, a thread and `userInfo` holding an integer and a 160-character string; the trigger and,
/// for the second shape, the attachment of a file the app has (moved into the attachment store by
/// `add`, as on iOS).
func realisticRequest(_ index: Int, shape: RealisticShape) throws -> UNNotificationRequest {
    var random = SplitMix64(seed: UInt64(index))
    let content = reminderContent(index, thread: "list-\(index % 16)")
    content.userInfo = ["taskID": index, "note": realisticNote(index)]
    let interval = Double.random(in: 86_400...30 * 86_400, using: &random)
    let trigger: UNNotificationTrigger
    switch shape {
    case .interval:
        trigger = UNTimeIntervalNotificationTrigger(timeInterval: interval, repeats: false)
    case .attachmentAndCalendar(let images):
        content.attachments = [
            try UNNotificationAttachment(
                identifier: "image",
                url: URL(fileURLWithPath: images + "/image-\(index).png"), options: nil)
        ]
        let components = Calendar.current.dateComponents(
            [.year, .month, .day, .hour, .minute], from: Date().addingTimeInterval(interval))
        trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
    }
    return UNNotificationRequest(identifier: "realistic-\(index)", content: content, trigger: trigger)
}

/// Builds and adds requests `0..<count` of a shape through `center`, `inFlight` at a time, each
/// built by the task that adds it.
func addRealistic(
    _ center: UNUserNotificationCenter, count: Int, offset: Int, shape: RealisticShape, inFlight: Int, label: String
) async throws {
    let next = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<inFlight {
            group.addTask {
                while true {
                    let index = next.value.add(1, ordering: .relaxed).oldValue
                    guard index < count else { return }
                    try await center.add(try realisticRequest(offset + index, shape: shape))
                    if index % 2000 == 0 { progress.update("\(label): \(index.formatted())/\(count.formatted())") }
                }
            }
        }
        try await group.waitForAll()
    }
}

/// The realistic add path (issue 25): `UNUserNotificationCenter.current()` on its SQLite store (a
/// fresh file through `CHIME_STORE`), requests built inside the timed region, 64 adds in flight.
/// First `count` adds with interval triggers, then `count / 5` with an attachment and a calendar
/// trigger (the image files, 2 KB each, are the app's before the clock starts; the second shape
/// adds to the store the first one filled).
@MainActor func benchAPIRealistic(_ options: Options, reference: Double?) async throws {
    precondition(realisticNote(options.count).count == 160, "the realistic note is 160 characters")
    let directory = try freshDirectory(options, "api-realistic")
    setenv("CHIME_STORE", directory + "/realistic.sqlite", 1)
    setenv("CHIME_BUNDLE_IDENTIFIER", "com.example.realistic", 1)
    setenv("CHIME_DESKTOP", "off", 1)
    setenv("CHIME_AUTHORIZATION", "allow", 1)
    let center = UNUserNotificationCenter.current()
    _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
    center.setNotificationCategories([reminderCategory])

    if options.realisticShapes.contains("interval") {
        let start = ContinuousClock.now
        let cpu = cpuSeconds()
        try await addRealistic(
            center, count: options.count, offset: 0, shape: .interval, inFlight: 64,
            label: "api realistic adds, interval")
        let seconds = (ContinuousClock.now - start).seconds
        let cpuPerAdd = (cpuSeconds() - cpu) / Double(options.count)
        let rate = Double(options.count) / seconds
        let pending = try await center.engine.pendingCount(app: center.bundleIdentifier)
        guard pending == options.count else { fail("api-realistic: \(pending) pending after \(options.count) adds") }
        progress.done(
            "api realistic adds, interval trigger: \(options.count.formatted()) in \(String(format: "%.2f", seconds)) s, \(String(format: "%.1f", cpuPerAdd * 1e6)) µs CPU each"
        )
        results["apiRealisticPerSecond"] = rate
        results["apiRealisticCPUMicroseconds"] = cpuPerAdd * 1e6
        let ratio = reference.map { rate / $0 }
        figures.append(
            Figure(
                name:
                    "realistic adds through UNUserNotificationCenter.current(): built in the clock, userInfo, interval 1-30 days (64 in flight)",
                value: "\(Int(rate).formatted()) /s", target: "≥ 0.40 × C loop", met: ratio.map { $0 >= 0.40 },
                ratio: ratio.map { String(format: "%.2f", $0) } ?? ""))
    }
    if options.realisticShapes.contains("attachment") {
        let count = max(1, options.count / 5)
        let before = try await center.engine.pendingCount(app: center.bundleIdentifier)
        let images = try freshDirectory(options, "api-realistic-images")
        progress.update("api realistic: writing \(count.formatted()) images", force: true)
        let image = Data((0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for index in 0..<count {
            try image.write(to: URL(fileURLWithPath: images + "/image-\(options.count + index).png"))
        }
        settleDisk()
        let start = ContinuousClock.now
        let cpu = cpuSeconds()
        try await addRealistic(
            center, count: count, offset: options.count, shape: .attachmentAndCalendar(images: images), inFlight: 64,
            label: "api realistic adds, attachment and calendar")
        let seconds = (ContinuousClock.now - start).seconds
        let cpuPerAdd = (cpuSeconds() - cpu) / Double(count)
        let rate = Double(count) / seconds
        let pending = try await center.engine.pendingCount(app: center.bundleIdentifier)
        let left = try FileManager.default.contentsOfDirectory(atPath: images).count
        guard pending == before + count, left == 0 else {
            fail(
                "api-realistic: \(pending - before) pending after \(count) adds, \(left) images not moved into the attachment store"
            )
        }
        progress.done(
            "api realistic adds, attachment and calendar trigger: \(count.formatted()) in \(String(format: "%.2f", seconds)) s, \(String(format: "%.1f", cpuPerAdd * 1e6)) µs CPU each"
        )
        results["apiRealisticAttachmentPerSecond"] = rate
        results["apiRealisticAttachmentCPUMicroseconds"] = cpuPerAdd * 1e6
        let ratio = reference.map { rate / $0 }
        figures.append(
            Figure(
                name: "realistic adds, second shape: an image attachment (moved into the store) and a calendar trigger",
                value: "\(Int(rate).formatted()) /s", ratio: ratio.map { String(format: "%.2f", $0) } ?? ""))
    }
    await center.engine.shutdown()
}

// MARK: - Main

/// Runs a helper program (its standard error shown) to its end, at most an hour; its standard output.
func run(_ executable: String, _ arguments: [String]) throws -> String {
    let result = try ChildProcess.run(executable, arguments: arguments, errors: .stream(.inherit), timeout: 3600)
    guard result.termination.succeeded else { fail("\(executable) ended with \(result.termination)") }
    return result.text
}

let options = Options.parse(CommandLine.arguments)
func wanted(_ name: String) -> Bool { options.only.isEmpty || options.only.contains(name) }
try FileManager.default.createDirectory(atPath: options.dir, withIntermediateDirectories: true)
let machine =
    (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
    .split(separator: "\n").first { $0.hasPrefix("model name") }?.split(separator: ":").last?
    .trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`).
func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").prefix(3).joined(
        separator: " ")
}
print(
    "Chime API benchmarks — \(Date().formatted(.iso8601)) — \(machine), \(ProcessInfo.processInfo.activeProcessorCount) cores — load average \(loadAverage())"
)

/// The C loop's rows/s for `rows` rows (`extra`: its options), its files removed afterwards.
func referenceLoop(_ path: String, rows: Int, _ extra: [String], label: String) throws -> Double? {
    settleDisk()
    progress.update("reference: plain C loop inserting \(rows.formatted()) rows\(label)", force: true)
    let output = try run(path, [options.dir + "/reference.sqlite", String(rows)] + extra)
    var rate: Double?
    for line in output.split(separator: "\n").reversed() {
        if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let value = (object["rowsPerSecond"] as? NSNumber)?.doubleValue
        {
            rate = value
            break
        }
    }
    for suffix in ["", "-wal", "-shm"] {
        try? FileManager.default.removeItem(atPath: options.dir + "/reference.sqlite" + suffix)
    }
    progress.done("reference\(label): \(rate.map { "\(Int($0).formatted()) rows/s" } ?? "?")")
    return rate
}

// The ratios are to the loop on the store's first schema (the reference issue 25's targets are set
// against); the loop on today's table and indexes (schema 8) is shown beside it.
var reference: Double?
if let path = options.reference, wanted("api-concurrent") || wanted("api-realistic") || wanted("api-burst") {
    let rows = max(options.count, options.burst)
    reference = try referenceLoop(path, rows: rows, [], label: "")
    if let reference {
        figures.append(
            Figure(
                name: "C loop, one transaction (the limit)", value: "\(Int(reference).formatted()) rows/s", ratio: "1"))
        results["referencePerSecond"] = reference
        if let today = try referenceLoop(path, rows: rows, ["--today"], label: ", today's table and indexes") {
            figures.append(
                Figure(
                    name: "C loop, one transaction, today's table and indexes (schema 8)",
                    value: "\(Int(today).formatted()) rows/s", ratio: String(format: "%.2f", today / reference)))
            results["referenceTodayPerSecond"] = today
        }
    }
}

if wanted("api-concurrent") {
    settleDisk()
    try await benchAPIConcurrent(options, reference: reference)
}
if wanted("api-realistic") {
    settleDisk()
    try await benchAPIRealistic(options, reference: reference)
}
if wanted("api-burst") {
    settleDisk()
    try await benchAPIBurst(options, reference: reference)
}
if wanted("api-steady") {
    settleDisk()
    try await benchAPISteady(options)
}
if wanted("cost") {
    settleDisk()
    try await benchCost(options)
}

print("load average at the end: \(loadAverage())")
let headers = ["measurement", "Chime", "target", "met", "ratio to the C loop"]
let table = figures.map { [$0.name, $0.value, $0.target, $0.met.map { $0 ? "yes" : "NO" } ?? "–", $0.ratio] }
let widths = headers.indices.map { column in ([headers[column]] + table.map { $0[column] }).map(\.count).max() ?? 0 }
func line(_ cells: [String]) -> String {
    "| "
        + cells.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
        .joined(separator: " | ") + " |"
}
print(line(headers))
print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
for row in table { print(line(row)) }

if let json = options.json {
    var all =
        (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json)))) as? [String: Any] ?? [:]
    results["date"] = Date().formatted(.iso8601)
    results["machine"] = "\(machine), \(ProcessInfo.processInfo.activeProcessorCount) cores"
    all["api"] = results
    try JSONSerialization.data(withJSONObject: all, options: [.prettyPrinted, .sortedKeys]).write(
        to: URL(fileURLWithPath: json))
}
