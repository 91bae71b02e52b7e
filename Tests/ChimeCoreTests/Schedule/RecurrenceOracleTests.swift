import Foundation
import TestThreads
import Testing

@testable import ChimeCore

/// Chime's recurrence engine held to an independent implementation: python-dateutil's `rrule`
/// (Tests/Support/RecurrenceOracle/rrule_oracle.py, in a virtual environment that
/// scripts/recurrence-test-env.sh makes from PyPI).
///
/// dateutil expands rules in wall-clock time with the zone attached, as Chime does; the oracle turns
/// each wall time into an instant with zoneinfo's fold=0, which reads a time in a daylight-saving
/// gap with the offset before the gap (it moves forward by the gap, RFC 5545 section 3.3.5) and a
/// repeated time at its first pass. So the two are compared as instants, also across clock
/// changes. Where dateutil departs from RFC 5545 the generator does not go (see
/// ``RecurrenceCaseGenerator``).
@Suite("Recurrence rules against python-dateutil", .testThreads)
struct RecurrenceOracleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    struct Case {
        var rule: RecurrenceRule
        var start: DateComponents
        var zone: String
        var after: Int
        var withExceptions: Bool
    }

    static func cases(count: Int, seed: UInt64) -> [Case] {
        var generator = RecurrenceCaseGenerator(seed: seed)
        var cases: [Case] = []
        for _ in 0..<count {
            let rule = generator.rule()
            let start = generator.start()
            let zone = generator.pick(RecurrenceCaseGenerator.zones)
            let wall =
                CivilDays.days(year: start.year!, month: start.month!, day: start.day!) * 86_400 + start.hour! * 3600
                + start.minute! * 60 + start.second!
            let exceptions = generator.chance(30)
            // From before the start, and from a later date (up to three years on).
            cases.append(
                Case(rule: rule, start: start, zone: zone, after: wall - 2 * 86_400, withExceptions: exceptions))
            cases.append(
                Case(
                    rule: rule, start: start, zone: zone, after: wall + generator.int(0...3 * 366 * 86_400),
                    withExceptions: exceptions))
        }
        return cases
    }

    @Test("the first 20 occurrences of 400 generated rules (from the start and from a later date) match dateutil's")
    func matchesDateutil() async throws {
        try await Self.compare(Self.cases(count: 400, seed: 0x5EED_2024), label: "recurrence oracle")
    }

    /// The differential run of scripts/fuzz-differential.sh: `CHIME_DIFFERENTIAL_CASES` rules (two
    /// queries each) from `CHIME_DIFFERENTIAL_SEED` (default: one from the clock, printed).
    @Test(
        "many generated rules from any seed match dateutil's (scripts/fuzz-differential.sh)",
        .enabled(if: ProcessInfo.processInfo.environment["CHIME_DIFFERENTIAL_CASES"] != nil))
    func differential() async throws {
        let environment = ProcessInfo.processInfo.environment
        let count = Int(environment["CHIME_DIFFERENTIAL_CASES"] ?? "") ?? 1000
        let seed = UInt64(environment["CHIME_DIFFERENTIAL_SEED"] ?? "") ?? UInt64(Date().timeIntervalSince1970 * 1000)
        try await Self.compare(Self.cases(count: count, seed: seed), label: "recurrence differential (seed \(seed))")
    }

    /// Asks dateutil for each case's first 20 occurrences and expects Chime's to be the same.
    static func compare(_ cases: [Case], label: String) async throws {
        let input = JSONValue.array(
            cases.map { c in
                let s = c.start
                func pad(_ value: Int, _ width: Int = 2) -> String {
                    String(repeating: "0", count: max(0, width - String(value).count)) + String(value)
                }
                return .object(
                    JSONObject([
                        ("rule", .string(c.rule.rruleString)),
                        (
                            "start",
                            .string(
                                "\(pad(s.year!, 4))-\(pad(s.month!))-\(pad(s.day!))T\(pad(s.hour!)):\(pad(s.minute!)):\(pad(s.second!))"
                            )
                        ),
                        ("zone", .string(c.zone)), ("after", .integer(Int64(c.after))), ("count", .integer(20)),
                        ("exdates", .array(c.withExceptions ? [.integer(1), .integer(3)] : [])),
                    ]))
            })
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-rrule-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("cases.json")
        try Data(input.serialized().utf8).write(to: file)

        let environment = try await ChildProcess.run(packageRoot + "/scripts/recurrence-test-env.sh", timeout: 600)
        try #require(environment.termination.succeeded, "recurrence-test-env.sh: \(environment.errorText)")
        let python = environment.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let output = try await ChildProcess.run(
            python, arguments: [packageRoot + "/Tests/Support/RecurrenceOracle/rrule_oracle.py", file.path],
            environment: ["PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"],
            timeout: 600 + Double(cases.count) / 2)
        try #require(output.termination.succeeded, "rrule_oracle.py: \(output.errorText)")
        guard case .array(let answers) = try JSONValue.parse(output.text) else {
            Issue.record("not a list: \(output.text.prefix(200))")
            return
        }
        try #require(answers.count == cases.count)

        var matched = 0
        var occurrences = 0
        var slow = 0
        var mismatches: [String] = []
        for (c, answer) in zip(cases, answers) {
            if answer["slow"] != nil {
                slow += 1
                continue
            }
            if let failure = answer["failed"] {
                Issue.record("dateutil failed on \(c.rule.rruleString): \(failure)")
                continue
            }
            guard case .object(let fields) = answer,
                case .array(let exdates)? = fields["exdates"],
                case .array(let next)? = fields["next"]
            else {
                Issue.record("bad answer \(answer)")
                continue
            }
            let seconds: ([JSONValue]) -> [Int] = {
                $0.compactMap { if case .integer(let n) = $0 { Int(n) } else { nil } }
            }
            let schedule = try RecurrenceSchedule(
                rule: c.rule, start: c.start, timeZone: try #require(TimeZone(identifier: c.zone)),
                exceptionDates: seconds(exdates).map { Date(timeIntervalSince1970: TimeInterval($0)) })
            // `after` is a wall time written as if UTC; any instant near it will do.
            let ours = schedule.next(20, after: Date(timeIntervalSince1970: TimeInterval(c.after))).map {
                Int($0.timeIntervalSince1970)
            }
            let theirs = seconds(next)
            occurrences += theirs.count
            if ours == theirs {
                matched += 1
            } else if mismatches.count < 10 {
                let common = min(ours.count, theirs.count)
                let firstDifference = (0..<common).first(where: { ours[$0] != theirs[$0] }) ?? common
                mismatches.append(
                    "\(c.rule.rruleString) start \(c.start) \(c.zone) after \(c.after): ours \(ours.count), dateutil \(theirs.count), "
                        + "first difference at \(firstDifference): \(ours.dropFirst(firstDifference).prefix(2)) vs \(theirs.dropFirst(firstDifference).prefix(2))"
                )
            }
        }
        print(
            "\(label): \(matched) of \(cases.count - slow) queries matched python-dateutil (\(occurrences) occurrences); \(slow) too slow for dateutil, left out"
        )
        #expect(slow < cases.count / 10, "dateutil was too slow for \(slow) of \(cases.count) queries")
        #expect(mismatches.isEmpty, "\(matched) of \(cases.count) matched:\n\(mismatches.joined(separator: "\n"))")
    }

    /// Run by hand: `CHIME_RECURRENCE_BENCH=1 swift test --filter RecurrenceOracleTests/nextDateOf100000Rules`.
    @Test(
        "the next date of 100,000 different rules (a figure printed, no timed assertion)",
        .enabled(if: ProcessInfo.processInfo.environment["CHIME_RECURRENCE_BENCH"] != nil))
    func nextDateOf100000Rules() throws {
        var generator = RecurrenceCaseGenerator(seed: 0xBE_4C_11)
        var schedules: [RecurrenceSchedule] = []
        for _ in 0..<(Int(ProcessInfo.processInfo.environment["CHIME_RECURRENCE_BENCH"] ?? "") ?? 100_000) {
            let zone = try #require(TimeZone(identifier: generator.pick(RecurrenceCaseGenerator.zones)))
            schedules.append(try RecurrenceSchedule(rule: generator.rule(), start: generator.start(), timeZone: zone))
        }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = ContinuousClock()
        var found = 0
        var slowest: [(Duration, String)] = []
        let elapsed = clock.measure {
            for schedule in schedules {
                let one = clock.measure { if schedule.next(after: now) != nil { found += 1 } }
                if one > .milliseconds(5) {
                    slowest.append(
                        (one, "\(schedule.rule.rruleString) from \(schedule.start) \(schedule.timeZone.identifier)"))
                }
            }
        }
        print(
            "recurrence bench: next date of \(schedules.count) rules in \(elapsed) (\(found) have one); \(slowest.count) took over 5 ms"
        )
        for (time, rule) in slowest.sorted(by: { $0.0 > $1.0 }).prefix(8) { print("  \(time): \(rule)") }
    }
}
