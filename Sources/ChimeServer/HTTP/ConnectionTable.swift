/// Who holds the server's connection slots, what each is doing, and which to shed: the slot policy
/// as a pure state machine. ``ConnectionGuard`` feeds it libmicrohttpd's notifications and does
/// what it answers (shuts sockets down).
///
/// The rules:
/// - At most ``Limits/total`` connections are admitted at once, and at most
///   ``Limits/perAddress`` from one client address, so one address cannot take every slot.
/// - A connection must send a complete request head within ``Limits/headTimeout`` of being
///   accepted (or of its previous response), and the body within ``Limits/bodyTimeout`` of its
///   head, however often it sends a byte: idle time is not what counts.
/// - When the limit is reached, a new connection takes the slot of the oldest slow connection
///   (one still sending a head or a body); when there is none, the new connection is refused
///   (answered 503 if it sends its head at once, and closed after ``Limits/refusedTimeout``).
///   Requests being handled and event streams are never shed for a newcomer.
///
/// ```swift
/// var table = ConnectionTable(limits: .init(total: 2, perAddress: 2))
/// _ = table.open(1, address: "10.0.0.1", now: .zero)        // admitted
/// _ = table.open(2, address: "10.0.0.2", now: .zero)        // admitted
/// table.enter(.streaming, 2, now: .zero)
/// table.open(3, address: "10.0.0.3", now: .seconds(1))       // admitted; sheds 1 (slow)
/// ```
struct ConnectionTable {
    struct Limits: Sendable, Equatable {
        /// Connections admitted at once.
        var total: Int
        /// Connections admitted at once from one client address.
        var perAddress: Int
        /// From being accepted (or the end of the previous response) to a complete request head.
        var headTimeout: Duration = .seconds(10)
        /// From a complete head to a complete body.
        var bodyTimeout: Duration = .seconds(30)
        /// How long a refused connection may take to send the head its 503 answers.
        var refusedTimeout: Duration = .seconds(1)
    }

    /// What a connection is doing.
    enum Phase: Sendable, Equatable {
        /// Accepted (or between requests), its next request head not complete.
        case awaitingHead
        /// The head is complete; the body is arriving.
        case readingBody
        /// A request is being handled, or its response written.
        case busy
        /// An event stream is open on it.
        case streaming
        /// Shed or refused and past its time: its socket is being shut down.
        case closing
    }

    /// What the caller must do: shut these connections' sockets down.
    typealias Shed = [Int]

    struct Connection: Equatable {
        var address: String
        var admitted: Bool
        var phase: Phase
        var since: Duration
        /// Changes with every phase, so queue entries from an earlier phase are recognised as stale.
        var generation: Int
    }

    /// An entry of a queue of connections in time order; stale once the connection moved on.
    private struct Waiting {
        var id: Int
        var generation: Int
        var since: Duration
    }

    let limits: Limits
    private(set) var connections: [Int: Connection] = [:]
    /// Admitted connections, in all and by address.
    private(set) var admitted = 0
    private var byAddress: [String: Set<Int>] = [:]
    /// Slow connections in the order they became slow, one queue per deadline.
    private var awaitingHead = TimeQueue<Waiting>()
    private var readingBody = TimeQueue<Waiting>()
    private var refused = TimeQueue<Waiting>()

    init(limits: Limits) {
        self.limits = limits
    }

    /// How many connections from `address` are admitted.
    func admittedCount(from address: String) -> Int { byAddress[address]?.count ?? 0 }

    // MARK: - Events

    /// A new connection. Admits it (shedding a slow connection to make room when needed) or refuses it.
    mutating func open(_ id: Int, address: String, now: Duration) -> (admitted: Bool, shed: Shed) {
        var shed: Shed = []
        var admit = true
        if admittedCount(from: address) >= limits.perAddress {
            if let victim = oldestSlow(from: address) { shed.append(victim) } else { admit = false }
        }
        if admit, admitted - shed.count >= limits.total {
            if let victim = oldestSlow(excluding: shed) { shed.append(victim) } else { admit = false }
        }
        if !admit { shed.removeAll() }
        for victim in shed { expel(victim, now: now) }
        connections[id] = Connection(address: address, admitted: admit, phase: .awaitingHead, since: now, generation: 0)
        if admit {
            admitted += 1
            byAddress[address, default: []].insert(id)
            awaitingHead.append(Waiting(id: id, generation: 0, since: now))
        } else {
            refused.append(Waiting(id: id, generation: 0, since: now))
        }
        return (admit, shed)
    }

    /// A connection moved to `phase` (a complete head, a complete body, an event stream, or back
    /// to waiting for the next request).
    mutating func enter(_ phase: Phase, _ id: Int, now: Duration) {
        guard var connection = connections[id], connection.phase != .closing else { return }
        connection.phase = phase
        guard connection.admitted else {
            // A refused connection keeps the one deadline it was given when it was accepted.
            connections[id] = connection
            return
        }
        connection.since = now
        connection.generation += 1
        connections[id] = connection
        let entry = Waiting(id: id, generation: connection.generation, since: now)
        switch phase {
        case .awaitingHead: awaitingHead.append(entry)
        case .readingBody: readingBody.append(entry)
        case .busy, .streaming, .closing: break
        }
    }

    /// The connection is gone.
    mutating func close(_ id: Int) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        if connection.admitted { release(id, address: connection.address) }
    }

    /// Connections past their deadline at `now`, marked closing: shut them down.
    mutating func expire(now: Duration) -> Shed {
        var shed: Shed = []
        for (queue, timeout) in [
            (\ConnectionTable.awaitingHead, limits.headTimeout), (\ConnectionTable.readingBody, limits.bodyTimeout),
            (\ConnectionTable.refused, limits.refusedTimeout),
        ] {
            while let first = self[keyPath: queue].first {
                if !isCurrent(first) {
                    self[keyPath: queue].removeFirst()
                    continue
                }
                guard now - first.since >= timeout else { break }
                self[keyPath: queue].removeFirst()
                expel(first.id, now: now)
                shed.append(first.id)
            }
        }
        return shed
    }

    /// Marks a connection closing for another reason (an event stream whose client stopped
    /// reading or went away) and frees its slot; returns whether it was open.
    @discardableResult
    mutating func shed(_ id: Int, now: Duration) -> Bool {
        guard let connection = connections[id], connection.phase != .closing else { return false }
        expel(id, now: now)
        return true
    }

    // MARK: - Inside

    private func isCurrent(_ entry: Waiting) -> Bool {
        guard let connection = connections[entry.id] else { return false }
        return connection.generation == entry.generation && connection.phase != .closing
    }

    private func isSlow(_ connection: Connection) -> Bool {
        connection.phase == .awaitingHead || connection.phase == .readingBody
    }

    /// The admitted slow connection that has been slow the longest, from the queues' fronts.
    private mutating func oldestSlow(excluding: Shed) -> Int? {
        while let first = awaitingHead.first, !isCurrent(first) || excluding.contains(first.id) {
            awaitingHead.removeFirst()
        }
        while let first = readingBody.first, !isCurrent(first) || excluding.contains(first.id) {
            readingBody.removeFirst()
        }
        switch (awaitingHead.first, readingBody.first) {
        case (let head?, let body?): return head.since <= body.since ? head.id : body.id
        case (let head?, nil): return head.id
        case (nil, let body?): return body.id
        case (nil, nil): return nil
        }
    }

    /// The slow connection from `address` that has been slow the longest.
    private func oldestSlow(from address: String) -> Int? {
        var best: (id: Int, since: Duration)?
        for id in byAddress[address] ?? [] {
            guard let connection = connections[id], isSlow(connection) else { continue }
            if best.map({ connection.since < $0.since }) ?? true { best = (id, connection.since) }
        }
        return best?.id
    }

    private mutating func expel(_ id: Int, now: Duration) {
        guard var connection = connections[id], connection.phase != .closing else { return }
        if connection.admitted { release(id, address: connection.address) }
        connection.admitted = false
        connection.phase = .closing
        connection.since = now
        connection.generation += 1
        connections[id] = connection
    }

    private mutating func release(_ id: Int, address: String) {
        admitted -= 1
        byAddress[address]?.remove(id)
        if byAddress[address]?.isEmpty == true { byAddress[address] = nil }
    }
}

/// A first-in first-out queue: appends at the back, takes from the front, in amortised O(1).
struct TimeQueue<Element> {
    private var items: [Element] = []
    private var head = 0

    var first: Element? { head < items.count ? items[head] : nil }
    var count: Int { items.count - head }

    mutating func append(_ item: Element) { items.append(item) }

    mutating func removeFirst() {
        guard head < items.count else { return }
        head += 1
        if head > 64, head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
    }
}
