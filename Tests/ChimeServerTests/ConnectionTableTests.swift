import TestThreads
import Testing

@testable import ChimeServer

@Suite("Connection slots", .testThreads)
struct ConnectionTableTests {
    let limits = ConnectionTable.Limits(
        total: 3, perAddress: 2, headTimeout: .seconds(10), bodyTimeout: .seconds(30),
        refusedTimeout: .seconds(1))

    @Test("a connection that never completes its head is shed at the head deadline, however recently it was active")
    func headDeadline() {
        var table = ConnectionTable(limits: limits)
        #expect(table.open(1, address: "a", now: .zero).admitted)
        // Activity (bytes of a head) does not move the deadline: only a complete head does.
        #expect(table.expire(now: .seconds(9)).isEmpty)
        #expect(table.expire(now: .seconds(10)) == [1])
        #expect(table.admitted == 0)
        #expect(table.connections[1]?.phase == .closing)
    }

    @Test("the body has its own deadline from the head; requests being handled and streams have none")
    func bodyDeadline() {
        var table = ConnectionTable(limits: limits)
        _ = table.open(1, address: "a", now: .zero)
        _ = table.open(2, address: "b", now: .zero)
        table.enter(.readingBody, 1, now: .seconds(5))
        table.enter(.streaming, 2, now: .seconds(1))
        #expect(table.expire(now: .seconds(34)).isEmpty)
        #expect(table.expire(now: .seconds(35)) == [1])
        #expect(table.expire(now: .seconds(3600)).isEmpty)
        // Back to waiting for the next request: a new head deadline from then.
        table.enter(.awaitingHead, 2, now: .seconds(3600))
        #expect(table.expire(now: .seconds(3609)).isEmpty)
        #expect(table.expire(now: .seconds(3610)) == [2])
    }

    @Test("at the limit a newcomer takes the slot of the oldest slow connection")
    func shedsOldestSlow() {
        var table = ConnectionTable(limits: limits)
        _ = table.open(1, address: "a", now: .zero)
        _ = table.open(2, address: "b", now: .seconds(1))
        _ = table.open(3, address: "c", now: .seconds(2))
        table.enter(.busy, 1, now: .seconds(3))
        let (admitted, shed) = table.open(4, address: "d", now: .seconds(4))
        #expect(admitted)
        #expect(shed == [2])  // 1 is being handled; 2 has waited for its head the longest
        #expect(table.admitted == 3)
    }

    @Test("when no connection is slow, a newcomer is refused and closed after its short deadline")
    func refusesWhenNoneIsSlow() {
        var table = ConnectionTable(limits: limits)
        for id in 1...3 {
            _ = table.open(id, address: "addr\(id)", now: .zero)
            table.enter(.streaming, id, now: .zero)
        }
        let (admitted, shed) = table.open(4, address: "d", now: .seconds(1))
        #expect(!admitted)
        #expect(shed.isEmpty)
        // Its head arrives (to be answered 503); it is closed at its deadline all the same.
        table.enter(.busy, 4, now: .seconds(1))
        #expect(table.expire(now: .milliseconds(1999)).isEmpty)
        #expect(table.expire(now: .seconds(2)) == [4])
        table.close(4)
        #expect(table.connections[4] == nil)
        #expect(table.admitted == 3)
    }

    @Test("one address holds at most its share; its own slow connections make room first")
    func perAddressShare() {
        var table = ConnectionTable(limits: limits)
        _ = table.open(1, address: "x", now: .zero)
        _ = table.open(2, address: "x", now: .seconds(1))
        table.enter(.streaming, 1, now: .seconds(1))
        // A third from x sheds x's own slow connection, not anyone else's.
        _ = table.open(3, address: "y", now: .seconds(2))
        let third = table.open(4, address: "x", now: .seconds(3))
        #expect(third.admitted && third.shed == [2])
        #expect(table.admittedCount(from: "x") == 2)
        // With nothing slow left, x is refused while others are still admitted.
        table.enter(.streaming, 4, now: .seconds(3))
        #expect(!table.open(5, address: "x", now: .seconds(4)).admitted)
        table.enter(.busy, 3, now: .seconds(4))
        #expect(!table.open(6, address: "z", now: .seconds(4)).admitted)  // the total is reached
        table.close(3)
        #expect(table.open(7, address: "z", now: .seconds(5)).admitted)
    }

    @Test("a connection shed for a newcomer is not shed again, and its close frees nothing twice")
    func shedOnce() {
        var table = ConnectionTable(limits: ConnectionTable.Limits(total: 1, perAddress: 1))
        _ = table.open(1, address: "a", now: .zero)
        #expect(table.open(2, address: "b", now: .seconds(1)).shed == [1])
        #expect(table.expire(now: .seconds(1000)) == [2])
        table.close(1)
        table.close(2)
        #expect(table.admitted == 0 && table.connections.isEmpty)
        #expect(table.open(3, address: "c", now: .seconds(1001)).admitted)
    }
}
