import ChimeCore
import ChimeServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failure talking to the service: exit code 1, with what to do.
public struct CommandError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Talks to a running `chime serve`, found through its data directory (`server.json` and
/// `owner-token`), so no further flags are needed.
public struct ServiceClient: Sendable {
    public let baseURL: URL
    public let token: String

    /// Finds the service of a data directory.
    public init(dataDirectory: String) throws {
        let infoPath = ChimeService.serverInfoPath(dataDirectory: dataDirectory)
        guard let data = FileManager.default.contents(atPath: infoPath),
              let info = try? JSONValue.parse(data), case .string(let url)? = info["url"], let base = URL(string: url)
        else {
            throw CommandError("no running Chime service found in \(dataDirectory) (no \(infoPath)); start one with `chime serve --data \(dataDirectory)`, or pass --data")
        }
        guard base.scheme == "http" || base.scheme == "https" else {
            throw CommandError("the service in \(dataDirectory) listens on \(url); this command needs it on TCP (start it with --listen HOST:PORT)")
        }
        let tokenPath = ChimeService.ownerTokenPath(dataDirectory: dataDirectory)
        guard let tokenData = FileManager.default.contents(atPath: tokenPath) else {
            throw CommandError("cannot read the owner token \(tokenPath); run as the user who started `chime serve`")
        }
        baseURL = base
        token = String(decoding: tokenData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct Response: Sendable {
        public var status: Int
        public var body: Data
        public var headers: [String: String]
        public var json: JSONValue? { try? JSONValue.parse(body) }
    }

    /// Sends a request; a non-2xx answer becomes a `CommandError` with the server's message.
    @discardableResult
    public func send(_ method: String, _ path: String, json: JSONValue? = nil, body: Data? = nil,
                     headers: [String: String] = [:], allowing: Set<Int> = []) async throws -> Response {
        guard let url = URL(string: path, relativeTo: baseURL) else { throw CommandError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = Data(json.serializedBytes())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw CommandError("cannot reach the Chime service at \(baseURL.absoluteString): \(error.localizedDescription); is `chime serve` running?")
        }
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        var headerFields: [String: String] = [:]
        for (key, value) in http?.allHeaderFields ?? [:] { headerFields[String(describing: key).lowercased()] = String(describing: value) }
        let result = Response(status: status, body: data, headers: headerFields)
        if !(200..<300).contains(status) && !allowing.contains(status) {
            throw CommandError(Self.describeFailure(status: status, body: data))
        }
        return result
    }

    static func describeFailure(status: Int, body: Data) -> String {
        if let json = try? JSONValue.parse(body) {
            if case .object(let error)? = json["error"] {
                let message = error["message"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "failed"
                let field = error["field"].flatMap { if case .string(let s) = $0 { s } else { nil } }
                return "\(message)\(field.map { " (field: \($0))" } ?? "") [HTTP \(status)]"
            }
            if case .string(let reason)? = json["reason"] { return "\(reason) [HTTP \(status)]" }
        }
        return "the service answered HTTP \(status): \(String(decoding: body.prefix(300), as: UTF8.self))"
    }

    /// Follows a server-sent event stream, calling `onEvent(kind, id, data)` for each event until
    /// the stream ends.
    public func follow(_ path: String, onEvent: @escaping @Sendable (String, String?, String) -> Void) async throws {
        guard let url = URL(string: path, relativeTo: baseURL) else { throw CommandError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.timeoutInterval = 365 * 86_400
        let reader = EventStreamReader(onEvent: onEvent)
        let session = URLSession(configuration: .default, delegate: reader, delegateQueue: nil)
        session.dataTask(with: request).resume()
        try await reader.finished()
        session.invalidateAndCancel()
    }
}

/// Splits a `text/event-stream` body into events. `@unchecked Sendable`: state guarded by `lock`.
final class EventStreamReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""
    private var waiter: CheckedContinuation<Void, any Error>?
    private var outcome: Result<Void, any Error>?
    private let onEvent: @Sendable (String, String?, String) -> Void

    init(onEvent: @escaping @Sendable (String, String?, String) -> Void) { self.onEvent = onEvent }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
            finish(.failure(CommandError("the event stream answered HTTP \(http.statusCode)")))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let events = lock.withLock { () -> [String] in
            buffer += String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
            var blocks: [String] = []
            while let range = buffer.range(of: "\n\n") {
                blocks.append(String(buffer[..<range.lowerBound]))
                buffer.removeSubrange(..<range.upperBound)
            }
            return blocks
        }
        for block in events {
            var kind = "message", id: String?, lines: [String] = []
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") { continue }
                if line.hasPrefix("event:") { kind = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("id:") { id = line.dropFirst(3).trimmingCharacters(in: .whitespaces) }
                if line.hasPrefix("data:") { lines.append(String(line.dropFirst(5).drop { $0 == " " })) }
            }
            if !lines.isEmpty { onEvent(kind, id, lines.joined(separator: "\n")) }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(error.map { .failure(CommandError("the event stream ended: \($0.localizedDescription)")) } ?? .success(()))
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

    func finished() async throws {
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
