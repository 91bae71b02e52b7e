import Foundation
import TestThreads
import Testing

@testable import ChimeCore

/// Calendar triggers for one moment take a short cut past Foundation's search: it must give what
/// the search gives, or step aside.
@Suite("Next fire date: the short cut for one exact instant", .testThreads)
struct ExactInstantTests {
    static let zones = [
        "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Chatham",
        "America/Sao_Paulo", "Africa/Casablanca",
    ]

    @Test(
        "for thousands of instants in zones with and without clock changes, the short cut agrees with the search",
        arguments: zones)
    func agrees(zone identifier: String) throws {
        let zone = try #require(TimeZone(identifier: identifier))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var generator = SystemRandomNumberGenerator()
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        var taken = 0
        for _ in 0..<2_000 {
            // Any wall time over three years, some of them in the past, some at clock changes.
            let instant = now.addingTimeInterval(
                Double.random(in: -86_400 * 30...86_400 * 1000, using: &generator).rounded())
            var components = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: instant)
            if Bool.random(using: &generator) {
                components.nanosecond = Int.random(in: 0..<1_000_000_000, using: &generator)
            }
            var searched = FireDates.search(components, calendar: calendar, after: now, previous: nil)
            // Foundation's search hands back an instant earlier in the current month for a date that
            // has passed; no date after now matches, which is what the short cut says.
            if let found = searched, found <= now { searched = nil }
            let chosen = FireDates.nextCalendarDate(matching: components, after: now, timeZone: zone)
            #expect(chosen == searched, "\(FireDates.describe(components)) in \(identifier)")
            if FireDates.exactInstant(components, calendar: calendar) != nil { taken += 1 }
        }
        #expect(taken > 1_000, "the short cut should serve most one-moment triggers (\(taken) of 2,000)")
    }

    @Test("it steps aside for days that do not exist, times clocks skip or repeat, and patterns")
    func stepsAside() throws {
        var berlin = Calendar(identifier: .gregorian)
        berlin.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let cases: [DateComponents] = [
            DateComponents(year: 2027, month: 2, day: 29, hour: 8, minute: 0, second: 0),  // no 29 February in 2027
            // skipped by the spring change
            DateComponents(year: 2027, month: 3, day: 28, hour: 2, minute: 30, second: 0),
            DateComponents(year: 2027, month: 10, day: 31, hour: 2, minute: 30, second: 0),  // repeated in the autumn
            DateComponents(year: 2027, month: 6, day: 1, hour: 8, minute: 0, second: 0, nanosecond: 999_999_999),
            DateComponents(year: 2027, month: 6, hour: 8, minute: 0, second: 0),  // no day: a pattern
            DateComponents(year: 2027, month: 6, day: 1, hour: 8, minute: 0, second: 0, weekday: 3),
        ]
        for components in cases {
            #expect(FireDates.exactInstant(components, calendar: berlin) == nil, "\(FireDates.describe(components))")
        }
    }
}
