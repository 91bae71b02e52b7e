import ChimeCore
import TestThreads
import Testing

@testable import ChimeServer

/// The token index's limits on reading the store for tokens it does not know.
@Suite("Token index", .testThreads)
struct TokenIndexTests {
    @Test(
        "a miss the store confirmed stands for its hold, or until the app changes; all apps share a budget of reads a second"
    )
    func readLimits() {
        let index = TokenIndex(limits: TokenIndex.ReadLimits(missHold: .seconds(1), perSecond: 5))
        let start = ContinuousClock.now
        #expect(index.mayRead(app: "com.example.a", at: start))
        index.missed(app: "com.example.a", at: start)
        #expect(!index.mayRead(app: "com.example.a", at: start + .milliseconds(999)))
        // Past the hold (the budget has refilled by then).
        #expect(index.mayRead(app: "com.example.a", at: start + .seconds(1)))
        index.missed(app: "com.example.a", at: start + .seconds(1))
        // A change of the app (here: its token set) lifts the miss at once.
        index.set(app: "com.example.a", hash: Tokens.hash("t"))
        #expect(index.mayRead(app: "com.example.a", at: start + .seconds(1)))

        // The budget: 5 at once, then one per 200 ms, whichever apps ask.
        let later = start + .seconds(10)
        let granted = (0..<8).filter { index.mayRead(app: "com.example.n\($0)", at: later) }
        #expect(granted.count == 5)
        #expect(!index.mayRead(app: "com.example.other", at: later + .milliseconds(100)))
        #expect(index.mayRead(app: "com.example.other", at: later + .milliseconds(300)))
        #expect(!index.mayRead(app: "com.example.other2", at: later + .milliseconds(300)))
        // Never more than the budget however long it has been.
        let much = later + .seconds(60)
        #expect((0..<8).filter { index.mayRead(app: "com.example.m\($0)", at: much) }.count == 5)
    }

    @Test("the table of misses stays small under misses for ever more apps")
    func missesBounded() {
        let index = TokenIndex(limits: TokenIndex.ReadLimits(missHold: .milliseconds(100), perSecond: 1000))
        var now = ContinuousClock.now
        for app in 0..<10_000 {
            now += .milliseconds(1)
            index.missed(app: "com.example.app\(app)", at: now)
        }
        #expect(index.missCount <= 256)
    }
}
