import ChimeCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reads a `text/event-stream` response through URLSession's data delegate, calling `onEvent(kind,
/// id, data)` for each event as it arrives. Used by ``ServiceBackend`` and the `chime` CLI.
///
/// `@unchecked Sendable`: its state is guarded by `lock`.
package final class EventStreamReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// Why a stream ended other than by the server closing it.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    private let lock = NSLock()
    private var parser = ServerSentEventParser()
    private var waiter: CheckedContinuation<Void, any Error>?
    private var outcome: Result<Void, any Error>?
    private let onEvent: @Sendable (String, String?, String) -> Void

    package init(onEvent: @escaping @Sendable (String, String?, String) -> Void) { self.onEvent = onEvent }

    package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
            finish(.failure(Failure(description: "the event stream answered HTTP \(http.statusCode)")))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events = lock.withLock { parser.feed(data) }
        for event in events { onEvent(event.kind, event.id, event.data) }
    }

    package func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(error.map { .failure(Failure(description: "the event stream ended: \($0.localizedDescription)")) } ?? .success(()))
    }

    private func finish(_ result: Result<Void, any Error>) {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
            guard outcome == nil else { return nil }
            outcome = result
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(with: result)
    }

    /// Returns when the stream has ended; throws when it failed.
    package func finished() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let done = lock.withLock { () -> Result<Void, any Error>? in
                if let outcome { return outcome }
                waiter = continuation
                return nil
            }
            if let done { continuation.resume(with: done) }
        }
    }
}
