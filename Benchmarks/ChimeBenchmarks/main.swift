// chime-bench: the engine on the SQLite store, on disk, against the physical limit (a plain C loop
// inserting the same rows) and the peer (APScheduler 3 with its SQLAlchemy job store on SQLite).
//
//   chime-bench [--dir DIR] [--count N] [--quick] [--only NAME[,NAME]] [--reference PATH] [--peer PYTHON]
//               [--json FILE]
//   chime-bench rss --count N --dir DIR      (one memory measurement, run as a child process)
//
// Prints a progress line on stderr and a table on stdout.
import BenchmarkSupport
import ChimeCore
import ChimeSQLite
import Foundation
import Synchronization

// MARK: - Options

struct Options {
    var dir = FileManager.default.temporaryDirectory.appendingPathComponent("chime-bench").path
    var count = 1_000_000
    var burst = 100_000
    var rate = 10_000
    var seconds = 30
    var rssCounts = [1_000_000, 10_000_000]
    /// The store sizes `growth` measures at, in order.
    var growthLevels = [100_000, 1_000_000, 10_000_000]
    var only: Set<String> = []
    var reference: String?
    var peerPython: String?
    var peerScript = "Benchmarks/peer/apscheduler_bench.py"
    var json: String?
    /// Where the steady run writes each delivery's due offset and lateness (CSV), for profiling.
    var trace: String?
    var mode = "all"

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var iterator = arguments.dropFirst().makeIterator()
        func value(_ flag: String) -> String {
            guard let value = iterator.next() else { fail("\(flag) needs a value") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "rss": options.mode = "rss"
            case "--dir": options.dir = value(argument)
            case "--count": options.count = Int(value(argument)) ?? options.count
            case "--burst": options.burst = Int(value(argument)) ?? options.burst
            case "--rate": options.rate = Int(value(argument)) ?? options.rate
            case "--seconds": options.seconds = Int(value(argument)) ?? options.seconds
            case "--rss-counts": options.rssCounts = value(argument).split(separator: ",").compactMap { Int($0) }
            case "--growth-levels":
                options.growthLevels = value(argument).split(separator: ",").compactMap { Int($0) }.sorted()
            case "--only": options.only = Set(value(argument).split(separator: ",").map(String.init))
            case "--reference": options.reference = value(argument)
            case "--peer": options.peerPython = value(argument)
            case "--peer-script": options.peerScript = value(argument)
            case "--json": options.json = value(argument)
            case "--trace": options.trace = value(argument)
            case "--quick":
                options.count = 100_000
                options.burst = 20_000
                options.seconds = 5
                options.rssCounts = [100_000]
                options.growthLevels = [100_000, 300_000]
            case "-h", "--help":
                print(
                    "usage: chime-bench [--dir DIR] [--count N] [--burst N] [--rate R] [--seconds S] [--rss-counts N,M] [--growth-levels N,M,...] [--quick] [--only bulk,concurrent,restart,open,burst,burst-logged,steady,reads,rss,growth] [--reference PATH] [--peer PYTHON] [--json FILE] [--trace FILE (steady: due offset s, lateness ms per delivery)]"
                )
                exit(0)
            default: fail("unknown argument \(argument); see --help")
            }
        }
        return options
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("chime-bench: \(message)\n".utf8))
    exit(1)
}

// MARK: - Progress and results

/// Progress on stderr: redrawn in place on a terminal, plain lines in a log (ChimeCore).
let progress = ProgressLine()

/// Waits until what earlier measurements wrote has reached the disk (`sync`), so one part's
/// write-back does not land in the next part's figures.
func settleDisk() {
    progress.update("waiting for earlier writes to reach the disk", force: true)
    sync()
}

struct Row {
    var name: String
    var chime: String
    var target: String
    var met: Bool?
    var reference: String = ""
    var peer: String = ""
    var ratios: String = ""
}

var rows: [Row] = []
var results: [String: Any] = [:]

func rate(_ count: Int, _ seconds: Double) -> Double { Double(count) / seconds }
func formatRate(_ value: Double) -> String { "\(Int(value.rounded()).formatted()) /s" }
func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }

// MARK: - Workload

/// Realistic requests: a title, a body, ~200 bytes of user info, due dates in random order.
/// The requests' 80-byte note, made once: `String(repeating:count:)` for each request (it appends
/// one character at a time) cost more than the rest of building the request.
let note = String(repeating: "n", count: 80)

func makeRequests(_ range: Range<Int>, prefix: String = "req", seed: UInt64 = 42) -> [NotificationRequest] {
    var generator = SplitMix(seed: seed &+ UInt64(range.lowerBound))
    return range.map { index in
        var content = NotificationContent(
            title: "Reminder \(index)",
            body: "Time to stretch, drink some water and look away from the screen.")
        content.sound = .default
        content.categoryIdentifier = "reminder"
        content.threadIdentifier = "thread-\(index % 16)"
        content.userInfo = [
            "taskID": .string("task-\(index)-\(generator.next() % 1_000_000)"),
            "list": .string("Personal errands and weekly chores"),
            "priority": .integer(Int64(index % 5)),
            "tags": .array([.string("health"), .string("daily"), .string("focus")]),
            "note": .string(note),
        ]
        let interval = 60 + Double(generator.next() % (86_400 * 30 - 60))
        return NotificationRequest(
            identifier: "\(prefix)-\(index)", content: content,
            trigger: .timeInterval(interval, repeats: false))
    }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func freshStore(_ options: Options, _ name: String) throws -> String {
    try FileManager.default.createDirectory(atPath: options.dir, withIntermediateDirectories: true)
    let path = options.dir + "/" + name + ".sqlite"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return path
}

func makeEngine(_ path: String, recordsEvents: Bool = false) throws -> NotificationEngine {
    var configuration = NotificationEngine.Configuration()
    configuration.recordsEvents = recordsEvents
    return NotificationEngine(
        store: try SQLiteStore(path: path), policy: FixedAuthorizationPolicy(.grant),
        configuration: configuration)
}

let app = "com.example.bench"

/// A trigger that fires at exactly `date` whatever the time of the add: a calendar trigger with every
/// component down to the nanosecond, in UTC.
func exactly(_ date: Date) -> NotificationTrigger {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    var components = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
    components.timeZone = calendar.timeZone
    return .calendar(components, repeats: false)
}

func authorize(_ engine: NotificationEngine) async throws {
    _ = try await engine.requestAuthorization(app: app, options: [.alert, .sound, .badge])
}

// MARK: - Measurements

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// (1a) The bulk call: chunks of 10,000 requests per `add`.
func benchBulk(_ options: Options) async throws -> Double {
    let path = try freshStore(options, "bulk")
    let engine = try makeEngine(path)
    try await authorize(engine)
    let chunk = 10_000
    let start = ContinuousClock.now
    var done = 0
    while done < options.count {
        let requests = makeRequests(done..<min(done + chunk, options.count))
        try await engine.add(requests, app: app)
        done += requests.count
        progress.update("bulk add: \(done.formatted())/\(options.count.formatted())")
    }
    let seconds = (ContinuousClock.now - start).seconds
    progress.done("bulk add: \(options.count.formatted()) in \(String(format: "%.2f", seconds)) s")
    await engine.shutdown()
    return rate(options.count, seconds)
}

/// (1b) Many concurrent single adds (one request per `add`), 64 tasks at a time.
func benchConcurrent(_ options: Options) async throws -> Double {
    let path = try freshStore(options, "concurrent")
    let engine = try makeEngine(path)
    try await authorize(engine)
    let tasks = 64
    let perTask = options.count / tasks
    let counter = Counter()
    let total = perTask * tasks
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<tasks {
            group.addTask {
                let requests = makeRequests(task * perTask..<(task + 1) * perTask, prefix: "single")
                for request in requests {
                    try await engine.add([request], app: app)
                    let done = counter.value.add(1, ordering: .relaxed).newValue
                    if done % 5000 == 0 {
                        progress.update("concurrent single adds: \(done.formatted())/\(total.formatted())")
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    let seconds = (ContinuousClock.now - start).seconds
    progress.done("concurrent single adds: \(total.formatted()) in \(String(format: "%.2f", seconds)) s")
    await engine.shutdown()
    return rate(total, seconds)
}

/// (2) Restart with the bulk store's pending requests plus one due now: time from opening the store
/// until that notification has fired.
func benchRestart(_ options: Options) async throws -> Double {
    let path = options.dir + "/bulk.sqlite"
    guard FileManager.default.fileExists(atPath: path) else {
        throw ChimeError(.notFound, "run the bulk benchmark first")
    }
    do {
        let engine = try makeEngine(path)
        try await engine.add(
            [
                NotificationRequest(
                    identifier: "due-at-restart", content: NotificationContent(title: "Due"),
                    trigger: .timeInterval(0.2, repeats: false))
            ], app: app)
        await engine.shutdown()
    }
    try await Sleep.for(.milliseconds(300))
    progress.update("restart: opening a store with \(options.count.formatted()) pending", force: true)
    let start = ContinuousClock.now
    let engine = try makeEngine(path)
    let fired = try await engine.fireDue(now: Date())
    let seconds = (ContinuousClock.now - start).seconds
    guard fired.contains(where: { $0.request.identifier == "due-at-restart" }) else {
        throw ChimeError(.notFound, "the due notification did not fire after restart")
    }
    progress.done("restart: first due notification fired \(ms(seconds)) after opening")
    await engine.shutdown()
    return seconds
}

/// (9) Cost per pending request as the store grows: one store filled with bulk adds (chunks of
/// 10,000) to each of `levels` in turn; at each, 64,000 concurrent single adds (64 tasks, as in
/// 1b) and a restart (a request due in 0.2 s added, a clean shutdown, the store opened again: time
/// until that request has fired). The rate of the last bulk chunks before each level is kept too.
struct GrowthPoint {
    var pending: Int
    var bulkPerSecond: Double?  // nil: no bulk adds before this level
    var singlePerSecond: Double
    var restartSeconds: Double
}

func benchGrowth(_ options: Options) async throws -> [GrowthPoint] {
    let path = try freshStore(options, "growth")
    // Optional so the restart can let go of it: the store closes (and marks itself closed cleanly,
    // which lets the next open skip the full check) when its engine goes away, not at `shutdown()`.
    var engine: NotificationEngine! = try makeEngine(path)
    try await authorize(engine)
    var pending = 0
    var points: [GrowthPoint] = []
    let chunk = 10_000
    for level in options.growthLevels {
        // Fill to `level` less the sample of single adds and the restart's request below.
        let sample = 64 * 1_000
        let target = max(pending, level - sample - 1)
        var lastStart = ContinuousClock.now
        var lastCount = 0
        while pending < target {
            let requests = makeRequests(pending..<min(pending + chunk, target), prefix: "fill")
            if target - pending <= 100_000 && lastCount == 0 { lastStart = ContinuousClock.now }
            try await engine.add(requests, app: app)
            if target - pending <= 100_000 { lastCount += requests.count }
            pending += requests.count
            progress.update("growth: filling to \(level.formatted()): \(pending.formatted()) pending")
        }
        let bulk = lastCount > 0 ? rate(lastCount, (ContinuousClock.now - lastStart).seconds) : nil

        let counter = Counter()
        let start = ContinuousClock.now
        let first = pending
        try await withThrowingTaskGroup(of: Void.self) { [engine = engine!] group in
            for task in 0..<64 {
                group.addTask {
                    let base = first + task * 1_000
                    for request in makeRequests(base..<base + 1_000, prefix: "grow") {
                        try await engine.add([request], app: app)
                        let done = counter.value.add(1, ordering: .relaxed).newValue
                        if done % 8_000 == 0 {
                            progress.update("growth at \(level.formatted()): single adds \(done.formatted())/64,000")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let single = rate(sample, (ContinuousClock.now - start).seconds)
        pending += sample

        let due = Date().addingTimeInterval(0.2)
        try await engine.add(
            [
                NotificationRequest(
                    identifier: "due-at-restart-\(level)", content: NotificationContent(title: "Due"),
                    trigger: exactly(due))
            ], app: app)
        pending += 1
        await engine.shutdown()
        engine = nil
        let wait = due.timeIntervalSinceNow + 0.05
        if wait > 0 { try await Sleep.for(.milliseconds(Int(wait * 1000))) }
        let trusted = FileManager.default.fileExists(atPath: path + "-verified")
        progress.update(
            "growth at \(level.formatted()): restarting (closed cleanly: \(trusted ? "yes" : "no, a full check"))",
            force: true)
        let reopened = ContinuousClock.now
        engine = try makeEngine(path)
        let fired = try await engine.fireDue(now: Date())
        let restart = (ContinuousClock.now - reopened).seconds
        guard fired.contains(where: { $0.request.identifier == "due-at-restart-\(level)" }) else {
            throw ChimeError(.notFound, "growth: the due notification did not fire after the restart at \(level)")
        }
        pending -= fired.count
        progress.done(
            "growth at \(pending.formatted()) pending: bulk \(bulk.map(formatRate) ?? "–") (last 100,000), single adds "
                + "\(formatRate(single)), restart → first due fired \(ms(restart))")
        points.append(
            GrowthPoint(pending: pending, bulkPerSecond: bulk, singlePerSecond: single, restartSeconds: restart))
    }
    await engine.shutdown()
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return points
}

/// Waits for `count` delivered events through the live scheduler; returns lateness samples
/// (delivered − due, seconds) and the time the last one arrived.
final class DeliveryRecorder: Sendable {
    private struct State {
        var lateness: [Double] = []
        var dues: [Date] = []
        var last = Date.distantPast
        var skippedCount = 0
        var sampleFrom = Date.distantPast
    }

    private let state = Mutex(State())
    private let allArrived = Completion()
    let expected: Int
    /// Deliveries due before this are counted but not sampled: they were due before the
    /// scheduler started (the scheduling ran past the lead time), so their lateness is not the
    /// engine's.
    var sampleFrom: Date {
        get { state.withLock { $0.sampleFrom } }
        set { state.withLock { $0.sampleFrom = newValue } }
    }

    init(expected: Int) {
        self.expected = expected
        state.withLock { state in
            state.lateness.reserveCapacity(expected)
            state.dues.reserveCapacity(expected)
        }
    }

    func record(_ event: EngineEvent) {
        guard let due = event.delivery?.notification.date else { return }
        let now = Date()
        let expected = self.expected
        let all = state.withLock { state -> Bool in
            if due < state.sampleFrom {
                state.skippedCount += 1
            } else {
                state.lateness.append(now.timeIntervalSince(due))
                state.dues.append(due)
            }
            state.last = now
            return state.lateness.count + state.skippedCount >= expected
        }
        if all { allArrived.complete() }
    }

    var count: Int { state.withLock { $0.lateness.count + $0.skippedCount } }
    /// Each sampled delivery's due date and lateness, in the order they arrived.
    var series: [(due: Date, lateness: Double)] { state.withLock { Array(zip($0.dues, $0.lateness)) } }
    /// How many deliveries were due before ``sampleFrom``.
    var skipped: Int { state.withLock { $0.skippedCount } }

    /// Waits until every expected delivery has arrived, or fails the benchmark at `deadline` saying
    /// how many did and how many `pending` (asked then) says are still in the store: a measurement
    /// that lost deliveries must neither hang nor report a figure.
    func wait(label: String, deadline: Date, pending: @escaping @Sendable () async throws -> Int) async {
        guard !(await allArrived.wait(until: deadline)) else { return }
        let arrived = count
        let waiting = (try? await pending()).map { $0.formatted() } ?? "?"
        fail(
            "\(label): \(arrived.formatted()) of \(expected.formatted()) deliveries arrived by \(deadline.formatted(.iso8601)); \(waiting) requests still pending"
        )
    }

    var samples: [Double] { state.withLock { $0.lateness } }
    var lastArrival: Date { state.withLock { $0.last } }
}

/// Fails the benchmark when scheduling reached request `done`, due at `due`, too late: a calendar
/// request added after its exact date is accepted and never fires (as on iOS), so its delivery
/// would never arrive. The machine was too busy for the lead time given.
func checkAhead(of due: Date, label: String, done: Int) {
    let late = Date().timeIntervalSince(due)
    if late >= 0 {
        fail(
            String(
                format: "%@: scheduling reached request %d %.2f s after it was due; nothing measured (a busy machine?)",
                label, done, late))
    }
}

/// (3) `count` requests due at the same instant: time from that instant until all are delivered;
/// with `logged`, each delivery also goes into the event log, as in `chime serve` (3b).
func benchBurst(_ options: Options, logged: Bool = false) async throws -> Double {
    let path = try freshStore(options, logged ? "burst-logged" : "burst")
    let engine = try makeEngine(path, recordsEvents: logged)
    try await authorize(engine)
    progress.update("burst: scheduling \(options.burst.formatted())", force: true)
    let due = Date(
        timeIntervalSince1970: (Date().timeIntervalSince1970 + 3 + Double(options.burst) / 40_000).rounded(.up))
    var done = 0
    while done < options.burst {
        checkAhead(of: due, label: "burst", done: done)
        let requests = makeRequests(done..<min(done + 10_000, options.burst), prefix: "burst").map { request in
            var request = request
            request.trigger = exactly(due)
            return request
        }
        try await engine.add(requests, app: app)
        done += requests.count
    }
    let recorder = DeliveryRecorder(expected: options.burst)
    let token = engine.subscribe(app: app) { recorder.record($0) }
    let firstDue = try await engine.nextFireDate() ?? due
    engine.startScheduler()
    let monitor = Task {
        while !Task.isCancelled {
            progress.update("burst: delivered \(recorder.count.formatted())/\(options.burst.formatted())")
            try? await Sleep.for(.milliseconds(100))
        }
    }
    await recorder.wait(label: "burst", deadline: due.addingTimeInterval(60)) {
        try await engine.pending(app: app).count
    }
    monitor.cancel()
    let seconds = recorder.lastArrival.timeIntervalSince(firstDue)
    engine.unsubscribe(token)
    progress.done("burst: \(options.burst.formatted()) delivered \(ms(seconds)) after the first was due")
    await engine.shutdown()
    return seconds
}

/// (4) Steady firing at `rate`/s for `seconds` s: lateness percentiles.
func benchSteady(_ options: Options) async throws -> (p50: Double, p99: Double, max: Double) {
    let path = try freshStore(options, "steady")
    let engine = try makeEngine(path)
    try await authorize(engine)
    let total = options.rate * options.seconds
    let spacing = 1.0 / Double(options.rate)
    progress.update("steady: scheduling \(total.formatted())", force: true)
    // Lead time for scheduling everything first (about 15,000 adds/s with the checkpointer busy).
    let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3 + Double(total) / 15_000).rounded(.up))
    var done = 0
    while done < total {
        let requests = makeRequests(done..<min(done + 10_000, total), prefix: "steady").enumerated().map {
            offset, request in
            var request = request
            request.trigger = exactly(start.addingTimeInterval(Double(done + offset) * spacing))
            return request
        }
        checkAhead(of: start.addingTimeInterval(Double(done) * spacing), label: "steady", done: done)
        try await engine.add(requests, app: app)
        done += requests.count
        progress.update("steady: scheduling \(done.formatted())/\(total.formatted())")
    }
    let recorder = DeliveryRecorder(expected: total)
    recorder.sampleFrom = Date()
    if recorder.sampleFrom > start {
        progress.done(
            "steady: scheduling ran \(ms(recorder.sampleFrom.timeIntervalSince(start))) past the lead time; deliveries due before the scheduler started are left out of the lateness"
        )
    }
    let token = engine.subscribe(app: app) { recorder.record($0) }
    engine.startScheduler()
    let monitor = Task {
        while !Task.isCancelled {
            progress.update(
                "steady: delivered \(recorder.count.formatted())/\(total.formatted()) at \(options.rate.formatted())/s")
            try? await Sleep.for(.milliseconds(200))
        }
    }
    await recorder.wait(label: "steady", deadline: start.addingTimeInterval(Double(options.seconds) + 60)) {
        try await engine.pending(app: app).count
    }
    monitor.cancel()
    engine.unsubscribe(token)
    await engine.shutdown()
    let sorted = recorder.samples.sorted()
    func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
    let result = (percentile(0.5), percentile(0.99), sorted.last ?? 0)
    if let trace = options.trace {
        var csv = "due_s,lateness_ms\n"
        for sample in recorder.series {
            csv += String(format: "%.6f,%.3f\n", sample.due.timeIntervalSince(start), sample.lateness * 1000)
        }
        try csv.write(toFile: trace, atomically: true, encoding: .utf8)
    }
    progress.done(
        "steady: \(total.formatted()) at \(options.rate.formatted())/s, lateness p50 \(ms(result.0)) p99 \(ms(result.1)) max \(ms(result.2))"
            + (recorder.skipped > 0
                ? " (\(recorder.skipped.formatted()) due before the scheduler started, left out)" : ""))
    return result
}

/// (6) A read (a page of 100 pending, what `GET /v1/apps/{app}/requests?limit=100` awaits) under a
/// stream of adds (batches of 20 as fast as the writer takes them), on the store's reader
/// connections or (`besideWriter: false`) on the writer as before: the reads' latency p50/p99/max,
/// and the adds a second.
func benchReads(_ options: Options, besideWriter: Bool) async throws -> (
    p50: Double, p99: Double, max: Double, adds: Double
) {
    let name = besideWriter ? "reads-beside" : "reads-writer"
    let path = try freshStore(options, name)
    var configuration = NotificationEngine.Configuration()
    configuration.recordsEvents = true
    configuration.readsBesideWriter = besideWriter
    let engine = NotificationEngine(
        store: try SQLiteStore(path: path), policy: FixedAuthorizationPolicy(.grant),
        configuration: configuration)
    try await authorize(engine)
    try await engine.add(makeRequests(0..<10_000, prefix: "base"), app: app)
    let stop = Atomic<Bool>(false)
    let added = Counter()
    let seconds = Double(max(5, options.seconds / 3))
    progress.update("\(name): reads for \(Int(seconds)) s under adds", force: true)
    let writer = Task {
        var round = 0
        while !stop.load(ordering: .relaxed) {
            try await engine.add(makeRequests(round * 20..<(round + 1) * 20, prefix: "stream"), app: app)
            added.value.add(20, ordering: .relaxed)
            round += 1
        }
    }
    var samples: [Double] = []
    let started = Date()
    while Date().timeIntervalSince(started) < seconds {
        let before = DispatchTime.now().uptimeNanoseconds
        let page = try await engine.pending(app: app, after: 0, limit: 100)
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - before) / 1e9)
        if page.count != 100 { fail("\(name): a page of \(page.count)") }
        try await Sleep.for(.milliseconds(2))
    }
    stop.store(true, ordering: .relaxed)
    try await writer.value
    let elapsed = Date().timeIntervalSince(started)
    await engine.shutdown()
    let sorted = samples.sorted()
    func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
    let result = (
        percentile(0.5), percentile(0.99), sorted.last ?? 0, rate(added.value.load(ordering: .relaxed), elapsed)
    )
    progress.done(
        "\(name): \(samples.count.formatted()) reads, p50 \(ms(result.0)) p99 \(ms(result.1)) max \(ms(result.2)); \(formatRate(result.3)) added meanwhile"
    )
    return result
}

/// (5) Peak RSS of a process that schedules `count` requests, restarts its engine over them and
/// fires the first: run as a child so each figure is that process's own high-water mark.
func rssChild(_ options: Options) async throws {
    let path = try freshStore(options, "rss-\(options.count)")
    do {
        let engine = try makeEngine(path, recordsEvents: false)
        try await authorize(engine)
        var done = 0
        while done < options.count {
            let requests = makeRequests(done..<min(done + 10_000, options.count), prefix: "rss")
            try await engine.add(requests, app: app)
            done += requests.count
            progress.update("rss: \(done.formatted())/\(options.count.formatted()) pending")
        }
        await engine.shutdown()
    }
    let engine = try makeEngine(path, recordsEvents: false)
    _ = try await engine.nextFireDate()
    _ = try await engine.pendingCount()
    await engine.shutdown()
    print(peakRSS())
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

func peakRSS() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0  // kB
    }
    return 0
}

/// Runs a helper program to its end, at most an hour; its standard output.
func run(_ executable: String, _ arguments: [String], passStderr: Bool = true) throws -> String {
    let result = try ChildProcess.run(
        executable, arguments: arguments, errors: .stream(passStderr ? .inherit : .null), timeout: 3600)
    guard result.termination.succeeded else {
        throw ChimeError(
            .storeFailure, "\(executable) \(arguments.joined(separator: " ")) ended with \(result.termination)")
    }
    return result.text
}

func jsonLine(_ text: String) -> [String: Any] {
    for line in text.split(separator: "\n").reversed() {
        if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] { return object }
    }
    return [:]
}

func double(_ any: Any?) -> Double? { (any as? NSNumber)?.doubleValue }

// MARK: - Main

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

let options = Options.parse(CommandLine.arguments)
func wanted(_ name: String) -> Bool { options.only.isEmpty || options.only.contains(name) }

if options.mode == "rss" {
    try await rssChild(options)
    exit(0)
}

let machine =
    (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
    .split(separator: "\n").first { $0.hasPrefix("model name") }?.split(separator: ":").last?
    .trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
let cores = ProcessInfo.processInfo.activeProcessorCount
print("Chime benchmarks — \(Date().formatted(.iso8601)) — \(machine), \(cores) cores — store on disk in \(options.dir)")

try FileManager.default.createDirectory(atPath: options.dir, withIntermediateDirectories: true)

// The physical limit and the peer, in the same run.
var referenceRate: Double?
/// The same loop with every index today's schema has on the table (pending_order and the partial ones).
var todayRate: Double?
if wanted("bulk"), let reference = options.reference {
    settleDisk()
    func loop(_ extra: [String], _ label: String) throws -> Double? {
        progress.update("reference: plain C loop inserting \(options.count.formatted()) rows\(label)", force: true)
        let output = try run(reference, [options.dir + "/reference.sqlite", String(options.count)] + extra)
        let rate = double(jsonLine(output)["rowsPerSecond"])
        progress.done("reference\(label): \(rate.map(formatRate) ?? "?")")
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: options.dir + "/reference.sqlite" + suffix)
        }
        return rate
    }
    referenceRate = try loop([], "")
    todayRate = try loop(["--today"], ", with today's table and indexes")
}

func peer(_ arguments: [String]) -> [String: Any]? {
    guard let python = options.peerPython else { return nil }
    progress.update("peer: apscheduler \(arguments.first ?? "")", force: true)
    guard let output = try? run(python, [options.peerScript] + arguments) else {
        progress.done("peer: apscheduler \(arguments.first ?? "") failed")
        return nil
    }
    let result = jsonLine(output)
    progress.done("peer: apscheduler \(arguments.first ?? ""): \(result)")
    return result
}

if wanted("bulk") {
    settleDisk()
    let chimeRate = try await benchBulk(options)
    let peerResult = peer(["schedule", "--count", "20000", "--db", options.dir + "/aps-schedule.sqlite"])
    let peerRate = double(peerResult?["jobsPerSecond"])
    var ratios: [String] = []
    if let referenceRate { ratios.append(String(format: "limit %.0f%%", chimeRate / referenceRate * 100)) }
    if let todayRate { ratios.append(String(format: "same indexes %.0f%%", chimeRate / todayRate * 100)) }
    if let peerRate { ratios.append(String(format: "peer ×%.0f", chimeRate / peerRate)) }
    rows.append(
        Row(
            name: "1a. schedule \(options.count.formatted()), bulk call", chime: formatRate(chimeRate),
            target: "≥ 70% of the loop with today's table and indexes",
            met: todayRate.map { chimeRate >= 0.7 * $0 },
            reference: referenceRate.map(formatRate) ?? "", peer: peerRate.map(formatRate) ?? "",
            ratios: ratios.joined(separator: ", ")))
    results["bulkPerSecond"] = chimeRate
    results["referencePerSecond"] = referenceRate
    results["referenceAllIndexesPerSecond"] = todayRate
    results["peerSchedulePerSecond"] = peerRate
}

if wanted("concurrent") {
    settleDisk()
    let chimeRate = try await benchConcurrent(options)
    rows.append(
        Row(
            name: "1b. schedule \(options.count.formatted()), concurrent single adds", chime: formatRate(chimeRate),
            target: "≥ 50,000 /s", met: chimeRate >= 50_000))
    results["concurrentPerSecond"] = chimeRate
}

if wanted("restart") && wanted("bulk") {
    settleDisk()
    let seconds = try await benchRestart(options)
    rows.append(
        Row(
            name: "2. restart with \(options.count.formatted()) pending → first due fires", chime: ms(seconds),
            target: "≤ 1 s", met: seconds <= 1))
    results["restartSeconds"] = seconds
}

if wanted("open") {
    // The integrity check at open (missing tables, PRAGMA quick_check) reads the whole file: its
    // cost on the bulk store, with the file in the page cache (warm) and as first read here.
    let path = options.dir + "/bulk.sqlite"
    guard FileManager.default.fileExists(atPath: path) else {
        fail("open: run the bulk benchmark first (--only bulk,open)")
    }
    // The full check runs when the file changed since its last clean close (here: its times
    // touched), as after a crash; a file unchanged since is trusted (`CleanClose`).
    var times: [Double] = []
    for _ in 0..<3 {
        utimensat(AT_FDCWD, path, nil, 0)
        let start = ContinuousClock.now
        let store = try SQLiteStore(path: path)
        times.append((ContinuousClock.now - start).seconds)
        guard store.verifiedAtOpen else { fail("open: the touched store was not checked") }
        store.close()
    }
    let start = ContinuousClock.now
    let trusted = try SQLiteStore(path: path)
    let trustedSeconds = (ContinuousClock.now - start).seconds
    guard !trusted.verifiedAtOpen else { fail("open: the store closed cleanly was checked again") }
    trusted.close()
    let size = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.doubleValue ?? 0
    progress.done(
        "open: \(options.count.formatted()) pending, \(String(format: "%.0f", size / 1e6)) MB: full check "
            + times.map(ms).joined(separator: ", ") + "; unchanged since a clean close \(ms(trustedSeconds))")
    rows.append(
        Row(
            name: "2b. open with \(options.count.formatted()) pending: full check first / warm; after a clean close",
            chime: "\(ms(times[0])) / \(ms(times[1...].min() ?? 0)); \(ms(trustedSeconds))", target: "–", met: nil))
    results["openSeconds"] = times[0]
    results["openWarmSeconds"] = times[1...].min()
    results["openTrustedSeconds"] = trustedSeconds
}

if wanted("burst") {
    settleDisk()
    let seconds = try await benchBurst(options)
    let peerCount = 10_000
    let peerResult = peer(["burst", "--count", String(peerCount), "--db", options.dir + "/aps-burst.sqlite"])
    let peerRate = double(peerResult?["jobsPerSecond"])
    let chimeRate = Double(options.burst) / seconds
    rows.append(
        Row(
            name: "3. \(options.burst.formatted()) due at one instant → all delivered", chime: ms(seconds),
            target: "≤ 1 s", met: seconds <= 1,
            peer: peerRate.map { "\(formatRate($0)) (\(peerCount.formatted()) jobs)" } ?? "",
            ratios: peerRate.map { String(format: "peer ×%.0f (rate)", chimeRate / $0) } ?? ""))
    results["burstSeconds"] = seconds
    results["peerBurstPerSecond"] = peerRate
}

if wanted("burst-logged") {
    settleDisk()
    let seconds = try await benchBurst(options, logged: true)
    rows.append(
        Row(
            name: "3b. \(options.burst.formatted()) due at one instant, each logged → all delivered",
            chime: ms(seconds),
            target: "–", met: nil))
    results["burstLoggedSeconds"] = seconds
}

if wanted("steady") {
    settleDisk()
    let lateness = try await benchSteady(options)
    let peerRate = 1000
    let peerResult = peer([
        "steady", "--rate", String(peerRate), "--seconds", "10", "--db", options.dir + "/aps-steady.sqlite",
    ])
    let peerP99 = double(peerResult?["p99Ms"])
    rows.append(
        Row(
            name: "4. steady \(options.rate.formatted())/s for \(options.seconds) s: lateness p50 / p99 / max",
            chime: "\(ms(lateness.p50)) / \(ms(lateness.p99)) / \(ms(lateness.max))", target: "p99 ≤ 5 ms, max ≤ 20 ms",
            met: lateness.p99 <= 0.005 && lateness.max <= 0.020,
            peer: peerP99.map { String(format: "p99 %.2f ms at %d/s", $0, peerRate) } ?? "",
            ratios: peerP99.map {
                String(format: "peer p99 ÷ Chime p99 = %.1f (peer at a tenth of the rate)", $0 / 1000 / lateness.p99)
            } ?? ""))
    results["steadyP50"] = lateness.p50
    results["steadyP99"] = lateness.p99
    results["steadyMax"] = lateness.max
}

if wanted("reads") {
    // Both in this run, one after the other on the same machine: on the writer (before) and beside it.
    let writer = try await benchReads(options, besideWriter: false)
    settleDisk()
    let beside = try await benchReads(options, besideWriter: true)
    rows.append(
        Row(
            name: "6. a page of 100 pending under a stream of adds, p50 / p99 / max",
            chime: "\(ms(beside.p50)) / \(ms(beside.p99)) / \(ms(beside.max))",
            target: "p99 below the writer's", met: beside.p99 < writer.p99,
            ratios:
                "on the writer (before): \(ms(writer.p50)) / \(ms(writer.p99)) / \(ms(writer.max)); p99 writer ÷ readers = "
                + String(format: "%.1f", writer.p99 / beside.p99)
                + "; adds \(formatRate(writer.adds)) vs \(formatRate(beside.adds))"))
    results["readsWriterP99"] = writer.p99
    results["readsBesideP99"] = beside.p99
    results["readsWriterAdds"] = writer.adds
    results["readsBesideAdds"] = beside.adds
}

if wanted("rss") {
    for count in options.rssCounts {
        progress.update("rss: child process with \(count.formatted()) pending", force: true)
        let output = try run(CommandLine.arguments[0], ["rss", "--count", String(count), "--dir", options.dir])
        let kilobytes = Int(output.split(separator: "\n").last ?? "0") ?? 0
        let megabytes = Double(kilobytes) / 1024
        progress.done("rss: \(count.formatted()) pending, peak \(String(format: "%.0f", megabytes)) MB")
        rows.append(
            Row(
                name: "5. peak RSS with \(count.formatted()) pending", chime: String(format: "%.0f MB", megabytes),
                target: "≤ 200 MB at 10M", met: count >= 10_000_000 ? megabytes <= 200 : nil))
        results["rssMB_\(count)"] = megabytes
    }
}

if wanted("growth") {
    settleDisk()
    let points = try await benchGrowth(options)
    if let base = points.first {
        for point in points {
            // Flat within 20%: single adds at least 0.8 of the smallest store's, restart at most
            // 1.2 times its time or within 5 ms of it (a few ms are the noise of one restart).
            let addsRatio = point.singlePerSecond / base.singlePerSecond
            let restartRatio = point.restartSeconds / base.restartSeconds
            let flat = addsRatio >= 0.8 && (restartRatio <= 1.2 || point.restartSeconds - base.restartSeconds <= 0.005)
            rows.append(
                Row(
                    name:
                        "9. growth: \(point.pending.formatted()) pending: single adds; restart → first due fires; bulk",
                    chime:
                        "\(formatRate(point.singlePerSecond)); \(ms(point.restartSeconds)); \(point.bulkPerSecond.map(formatRate) ?? "–")",
                    target: "flat within 20% of \(base.pending.formatted())",
                    met: point.pending == base.pending ? nil : flat,
                    ratios: String(format: "adds ×%.2f, restart ×%.2f", addsRatio, restartRatio)
                        + (point.bulkPerSecond.flatMap { bulk in
                            base.bulkPerSecond.map { String(format: ", bulk ×%.2f", bulk / $0) }
                        }
                            ?? "") + " of the smallest"))
            results["growth_\(point.pending)"] =
                [
                    "singlePerSecond": point.singlePerSecond, "restartSeconds": point.restartSeconds,
                    "bulkPerSecond": point.bulkPerSecond ?? NSNull(),
                ] as [String: Any]
        }
    }
}

// MARK: - Table

let headers = ["measurement", "Chime", "target", "met", "limit (C loop)", "peer (APScheduler)", "ratios"]
let table = rows.map {
    [$0.name, $0.chime, $0.target, $0.met.map { $0 ? "yes" : "NO" } ?? "–", $0.reference, $0.peer, $0.ratios]
}
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
    results["date"] = Date().formatted(.iso8601)
    results["machine"] = "\(machine), \(cores) cores"
    let data = try JSONSerialization.data(withJSONObject: results, options: [.prettyPrinted, .sortedKeys])
    try data.write(to: URL(fileURLWithPath: json))
}
