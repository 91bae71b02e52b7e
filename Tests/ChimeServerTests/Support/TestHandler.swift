import Foundation
import Synchronization

@testable import ChimeServer

/// A one-shot signal tasks can wait for.
final class Signal: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.fired = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// Requests held until the test lets them go, one at a time in the order they came: how many came
/// in, how many are inside at most.
final class Gate: Sendable {
    private struct State {
        var entered = 0
        var peak = 0
        var held: [CheckedContinuation<Void, Never>] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// Requests that came in, and the most held at once.
    var entered: Int { state.withLock { $0.entered } }
    var peak: Int { state.withLock { $0.peak } }

    /// Held until ``releaseOne()`` lets it (and those before it) go.
    func pass() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.entered += 1
                state.held.append(continuation)
                state.peak = max(state.peak, state.held.count)
                let ready = state.watchers.filter { $0.count <= state.entered }.map(\.continuation)
                state.watchers.removeAll { $0.count <= state.entered }
                return ready
            }
            for watcher in ready { watcher.resume() }
        }
    }

    /// Lets the oldest held request go.
    func releaseOne() {
        let first = state.withLock { state in state.held.isEmpty ? nil : state.held.removeFirst() }
        first?.resume()
    }

    /// Returns once `count` requests came in.
    func waitForEntered(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.entered >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// A handler for HTTP-layer tests: `/slow` waits for `release`, `/gate` for its turn through `gate`,
/// `/stream` opens an event stream, `/large?bytes=N` answers N bytes, everything else echoes the body.
final class TestHandler: HTTPHandler {
    let entered = Signal()
    let release = Signal()
    let gate = Gate()
    let streams = Mutex<[EventStream]>([])

    func bodyLimit(for request: HTTPRequest) -> Int { request.path == "/small" ? 16 : 1024 }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        switch request.path {
        case "/slow":
            entered.fire()
            await release.wait()
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array("finished".utf8), route: "/slow")
        case "/gate":
            await gate.pass()
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array("passed".utf8), route: "/gate")
        case "/stream":
            let stream = EventStream()
            streams.withLock { $0.append(stream) }
            stream.send(event: "hello", id: "1", data: "first")
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/event-stream")], body: .stream(stream), route: "/stream")
        case "/large":
            let count = request.query.first { $0.0 == "bytes" }.flatMap { Int($0.1) } ?? 0
            return HTTPResponse(
                status: 200, contentType: "application/octet-stream", body: [UInt8](repeating: 0x78, count: count),
                route: "/large")
        default:
            var text = "\(request.method) \(request.path) \(request.body.count)"
            for (name, value) in request.query { text += " \(name)=\(value)" }
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array(text.utf8), route: "/echo")
        }
    }

    func payloadTooLarge(_ request: HTTPRequest, limit: Int) -> HTTPResponse {
        HTTPResponse(status: 413, contentType: "text/plain", body: Array("too large".utf8), route: "/413")
    }

    func unavailable(_ request: HTTPRequest, reason: String) -> HTTPResponse {
        HTTPResponse(status: 503, contentType: "text/plain", body: Array(reason.utf8), route: "/503")
    }
}

extension HTTPServer {
    /// A started server on a free loopback port with `handler`, configured by `configure`.
    static func started(
        _ handler: any HTTPHandler = TestHandler(),
        _ configure: (inout HTTPServer.Configuration) -> Void = { _ in }
    ) throws -> HTTPServer {
        var configuration = HTTPServer.Configuration(listen: .tcp(host: "127.0.0.1", port: 0))
        configure(&configuration)
        let server = HTTPServer(configuration: configuration, handler: handler)
        try server.start()
        return server
    }
}
