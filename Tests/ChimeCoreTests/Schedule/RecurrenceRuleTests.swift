import ChimeCore
import Foundation
import TestThreads
import Testing

/// RRULE text: what is read, what is refused and why, and the canonical form.
@Suite("RecurrenceRule parsing", .testThreads)
struct RecurrenceRuleTests {
    @Test("the parts are read, with or without the RRULE: prefix, in any case")
    func parsesParts() throws {
        let rule = try RecurrenceRule(
            parsing: "rrule:freq=monthly;interval=2;count=10;byday=1su,-1SU;bymonth=1,3;bysetpos=-1;wkst=su")
        #expect(rule.frequency == .monthly)
        #expect(rule.interval == 2)
        #expect(rule.count == 10)
        #expect(rule.byDay == [.init(.sunday, ordinal: -1), .init(.sunday, ordinal: 1)])
        #expect(rule.byMonth == [1, 3])
        #expect(rule.bySetPosition == [-1])
        #expect(rule.weekStart == .sunday)
        let until = try RecurrenceRule(parsing: "FREQ=DAILY;UNTIL=19971224T000000Z")
        #expect(until.until == .instant(Date(timeIntervalSince1970: 882_921_600)))
        #expect(try RecurrenceRule(parsing: "FREQ=DAILY;UNTIL=20271231").until == .date(year: 2027, month: 12, day: 31))
        #expect(
            try RecurrenceRule(parsing: "FREQ=DAILY;UNTIL=20271231T170000").until
                == .localTime(year: 2027, month: 12, day: 31, hour: 17, minute: 0, second: 0))
        #expect(try RecurrenceRule(parsing: "FREQ=SECONDLY;BYSECOND=0,30").bySecond == [0, 30])
    }

    @Test("the canonical text is fixed-order, without defaults, and parses back equal")
    func canonicalText() throws {
        let rule = try RecurrenceRule(parsing: "BYDAY=FR,-1MO,FR;FREQ=MONTHLY;INTERVAL=1;WKST=MO;BYMONTHDAY=-1,13")
        #expect(rule.rruleString == "FREQ=MONTHLY;BYDAY=-1MO,FR;BYMONTHDAY=-1,13")
        #expect(try RecurrenceRule(parsing: rule.rruleString) == rule)
        let until = try RecurrenceRule(parsing: "FREQ=WEEKLY;UNTIL=20271231T230000Z;INTERVAL=2;WKST=SU;BYDAY=TU,TH")
        #expect(until.rruleString == "FREQ=WEEKLY;UNTIL=20271231T230000Z;INTERVAL=2;BYDAY=TU,TH;WKST=SU")
        var built = RecurrenceRule(frequency: .monthly)
        built.byDay = [.init(.friday), .init(.monday), .init(.wednesday), .init(.thursday), .init(.tuesday)]
        built.bySetPosition = [-1]
        #expect(built.rruleString == "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1")
    }

    @Test("generated rules' canonical text parses back to an equal rule")
    func generatedRoundTrip() throws {
        var generator = RecurrenceCaseGenerator(seed: 0x5EED_0001)
        for _ in 0..<2_000 {
            let rule = generator.rule()
            try rule.validate()
            #expect(try RecurrenceRule(parsing: rule.rruleString) == rule, "\(rule.rruleString)")
        }
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var text: String
        var field: String
        /// Words the message must hold (what is wrong, what is accepted).
        var mentions: [String]
        var testDescription: String { text }
    }

    static let refusals: [Refusal] = [
        Refusal(text: "", field: "trigger.rrule", mentions: ["NAME=VALUE"]),
        Refusal(text: "FREQ=DAILY;;COUNT=2", field: "trigger.rrule", mentions: ["NAME=VALUE"]),
        Refusal(text: "BYDAY=MO", field: "trigger.rrule.FREQ", mentions: ["needs FREQ", "MONTHLY"]),
        Refusal(text: "FREQ=FORTNIGHTLY", field: "trigger.rrule.FREQ", mentions: ["FORTNIGHTLY", "WEEKLY"]),
        Refusal(text: "FREQ=DAILY;COLOR=RED", field: "trigger.rrule.COLOR", mentions: ["COLOR", "BYSETPOS"]),
        Refusal(text: "FREQ=DAILY;FREQ=WEEKLY", field: "trigger.rrule.FREQ", mentions: ["twice"]),
        Refusal(text: "FREQ=DAILY;COUNT=3;UNTIL=20270101", field: "trigger.rrule.COUNT", mentions: ["COUNT and UNTIL"]),
        Refusal(text: "FREQ=DAILY;BYSETPOS=1", field: "trigger.rrule.BYSETPOS", mentions: ["another BY part"]),
        Refusal(text: "FREQ=WEEKLY;BYDAY=1MO", field: "trigger.rrule.BYDAY", mentions: ["1MO", "MONTHLY or YEARLY"]),
        Refusal(text: "FREQ=DAILY;BYDAY=-1FR", field: "trigger.rrule.BYDAY", mentions: ["-1FR", "FR"]),
        Refusal(text: "FREQ=YEARLY;BYWEEKNO=20;BYDAY=1MO", field: "trigger.rrule.BYDAY", mentions: ["BYWEEKNO"]),
        Refusal(text: "FREQ=YEARLY;BYDAY=54MO", field: "trigger.rrule.BYDAY", mentions: ["54", "1 to 53"]),
        Refusal(text: "FREQ=MONTHLY;BYDAY=0MO", field: "trigger.rrule.BYDAY", mentions: ["0", "1 to 53"]),
        Refusal(text: "FREQ=MONTHLY;BYDAY=MOO", field: "trigger.rrule.BYDAY", mentions: ["MOO", "MO, TU"]),
        Refusal(
            text: "FREQ=MONTHLY;BYMONTHDAY=32", field: "trigger.rrule.BYMONTHDAY",
            mentions: ["32", "1 to 31", "-31 to -1"]),
        Refusal(text: "FREQ=MONTHLY;BYMONTHDAY=0", field: "trigger.rrule.BYMONTHDAY", mentions: ["0", "1 to 31"]),
        Refusal(text: "FREQ=MONTHLY;BYMONTHDAY=1,,2", field: "trigger.rrule.BYMONTHDAY", mentions: ["not a number"]),
        Refusal(text: "FREQ=WEEKLY;BYMONTHDAY=1", field: "trigger.rrule.BYMONTHDAY", mentions: ["WEEKLY"]),
        Refusal(text: "FREQ=DAILY;BYHOUR=24", field: "trigger.rrule.BYHOUR", mentions: ["24", "0 to 23"]),
        Refusal(text: "FREQ=DAILY;BYHOUR=-1", field: "trigger.rrule.BYHOUR", mentions: ["not a number"]),
        Refusal(text: "FREQ=DAILY;BYMINUTE=60", field: "trigger.rrule.BYMINUTE", mentions: ["0 to 59"]),
        Refusal(text: "FREQ=DAILY;BYSECOND=61", field: "trigger.rrule.BYSECOND", mentions: ["0 to 60"]),
        Refusal(text: "FREQ=YEARLY;BYMONTH=13", field: "trigger.rrule.BYMONTH", mentions: ["13", "1 to 12"]),
        Refusal(text: "FREQ=YEARLY;BYYEARDAY=367", field: "trigger.rrule.BYYEARDAY", mentions: ["367", "1 to 366"]),
        Refusal(text: "FREQ=MONTHLY;BYYEARDAY=1", field: "trigger.rrule.BYYEARDAY", mentions: ["MONTHLY", "YEARLY"]),
        Refusal(text: "FREQ=YEARLY;BYWEEKNO=54", field: "trigger.rrule.BYWEEKNO", mentions: ["54", "1 to 53"]),
        Refusal(text: "FREQ=MONTHLY;BYWEEKNO=1", field: "trigger.rrule.BYWEEKNO", mentions: ["YEARLY"]),
        Refusal(
            text: "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=367", field: "trigger.rrule.BYSETPOS", mentions: ["367", "1 to 366"]),
        Refusal(text: "FREQ=DAILY;INTERVAL=0", field: "trigger.rrule.INTERVAL", mentions: ["0", "1 to 100000"]),
        Refusal(text: "FREQ=DAILY;INTERVAL=two", field: "trigger.rrule.INTERVAL", mentions: ["two", "not a number"]),
        Refusal(text: "FREQ=DAILY;COUNT=0", field: "trigger.rrule.COUNT", mentions: ["1 to 100000"]),
        Refusal(text: "FREQ=DAILY;UNTIL=2027", field: "trigger.rrule.UNTIL", mentions: ["YYYYMMDD"]),
        Refusal(text: "FREQ=DAILY;UNTIL=20270230", field: "trigger.rrule.UNTIL", mentions: ["not a date"]),
        Refusal(text: "FREQ=DAILY;UNTIL=20270101T250000Z", field: "trigger.rrule.UNTIL", mentions: ["not a date"]),
        Refusal(text: "FREQ=WEEKLY;WKST=XX", field: "trigger.rrule.WKST", mentions: ["XX", "MO, TU"]),
    ]

    @Test("a bad rule is refused naming the part and what is accepted", arguments: refusals)
    func refusal(_ refusal: Refusal) throws {
        let error = try #require(throws: ChimeError.self) { try RecurrenceRule(parsing: refusal.text) }
        #expect(error.code == .invalidTrigger)
        #expect(error.field == refusal.field, "\(error.message)")
        for word in refusal.mentions { #expect(error.message.contains(word), "\(error.message) lacks \(word)") }
    }

    @Test("a rule built in code is checked the same way")
    func validatesBuiltRules() throws {
        var rule = RecurrenceRule(frequency: .weekly)
        rule.byDay = [.init(.monday, ordinal: 2)]
        #expect(throws: ChimeError.self) { try rule.validate() }
        var schedulable = RecurrenceRule(frequency: .daily)
        schedulable.byHour = [25]
        let error = try #require(throws: ChimeError.self) {
            try RecurrenceSchedule(
                rule: schedulable, start: DateComponents(year: 2027, month: 1, day: 1), timeZone: .gmt)
        }
        #expect(error.field == "trigger.rrule.BYHOUR")
        let start = try #require(throws: ChimeError.self) {
            try RecurrenceSchedule(
                rule: RecurrenceRule(frequency: .daily), start: DateComponents(year: 2027, month: 2, day: 29),
                timeZone: .gmt)
        }
        #expect(start.field == "trigger.start")
    }
}
