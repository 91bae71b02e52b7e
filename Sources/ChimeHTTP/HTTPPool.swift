import CCurl
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Many requests in flight on one curl multi handle, on a thread of its own: connections are kept
/// and reused, HTTP/2 is used where a server offers it over TLS (requests to one origin are then
/// multiplexed on one connection), and every address curl is about to connect to is shown to
/// `addressCheck` first, which may refuse it (the Web Push sender's guard against private
/// addresses, checked at connect time, so a DNS answer cannot slip past it).
///
/// ```swift
/// let pool = HTTPPool(addressCheck: { url, address in WebPushEndpoints.isPublic(address) })
/// let response = try await pool.send(.init(url: "https://fcm.googleapis.com/fcm/send/…", headers: [("TTL", "60")], body: body))
/// pool.shutdown()
/// ```
public final class HTTPPool: Sendable {
    public struct Request: Sendable {
        public var url: String
        public var method: String
        public var headers: [(String, String)]
        public var body: [UInt8]
        /// Seconds to connect and to finish.
        public var timeout: Double

        public init(
            url: String, method: String = "POST", headers: [(String, String)] = [], body: [UInt8] = [],
            timeout: Double = 30
        ) {
            self.url = url
            self.method = method
            self.headers = headers
            self.body = body
            self.timeout = timeout
        }
    }

    /// Whether the request to `url` may connect to `address` (4 or 16 bytes, network order).
    public typealias AddressCheck = @Sendable (_ url: String, _ address: [UInt8]) -> Bool

    private struct State {
        var waiting: [PoolTransfer] = []
        var stopping = false
        /// Why nothing can be sent (libcurl could not make the multi handle): every send fails so.
        var broken: HTTPClientError?
    }

    private let state = Mutex(State())
    private let multi: UncheckedMulti?
    private let addressCheck: AddressCheck
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - connectionsPerHost: connections kept to one host at most (HTTP/2 multiplexes on them).
    ///
    /// When libcurl cannot make its multi handle (out of memory), the pool still exists and every
    /// ``send(_:)`` fails with `.failed` saying so: the caller's retries handle it like an outage.
    public init(connectionsPerHost: Int = 8, addressCheck: @escaping AddressCheck = { _, _ in true }) {
        _ = CurlTransfer.globalInit
        self.addressCheck = addressCheck
        guard let multi = curl_multi_init() else {
            self.multi = nil
            state.withLock {
                $0.stopping = true
                $0.broken = HTTPClientError(
                    .failed, "libcurl could not make a multi handle (out of memory?); nothing is sent")
            }
            return
        }
        let handle = UncheckedMulti(pointer: multi)
        self.multi = handle
        _ = chime_curl_multi_set_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
        _ = chime_curl_multi_set_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, connectionsPerHost)
        let thread = Thread { [self] in self.loop(handle.pointer) }
        thread.name = "chime.http-pool"
        thread.start()
    }

    /// Sends a request and returns the whole answer, whatever its status.
    ///
    /// - Throws: ``HTTPClientError`` when no answer came (`.permissionDenied` when `addressCheck`
    ///   refused every address; `.noService`, `.timedOut`, `.tls`, …), or the pool is shut down.
    public func send(_ request: Request) async throws(HTTPClientError) -> HTTPClient.Response {
        let result: Result<HTTPClient.Response, HTTPClientError> = await withCheckedContinuation { continuation in
            guard
                let transfer = PoolTransfer(
                    request, addressCheck: addressCheck, completion: { continuation.resume(returning: $0) })
            else {
                continuation.resume(
                    returning: .failure(
                        HTTPClientError(
                            .failed, "libcurl could not make a handle for \(request.url.prefix(100)) (out of memory?)"))
                )
                return
            }
            let refusal = state.withLock { state -> HTTPClientError? in
                guard !state.stopping, let multi else {
                    return state.broken ?? HTTPClientError(.failed, "the HTTP pool is shut down")
                }
                state.waiting.append(transfer)
                _ = curl_multi_wakeup(multi.pointer)
                return nil
            }
            if let refusal { transfer.finish(.failure(refusal)) }
        }
        return try result.get()
    }

    /// Ends every request in flight with an error and stops the thread; waits until it stopped.
    public func shutdown() {
        let first = state.withLock { state -> Bool in
            defer { state.stopping = true }
            if !state.stopping, let multi { _ = curl_multi_wakeup(multi.pointer) }
            return !state.stopping
        }
        if first { finished.wait() }
    }

    /// The thread: adds what was sent, drives curl, hands each finished transfer its answer, and
    /// sleeps in `curl_multi_poll` until a socket is ready, curl's timer is due or `send` wakes it.
    private func loop(_ multi: UnsafeMutableRawPointer) {
        var running: [UnsafeMutableRawPointer: PoolTransfer] = [:]
        while true {
            let (added, stopping) = state.withLock { state -> ([PoolTransfer], Bool) in
                defer { state.waiting = [] }
                return (state.waiting, state.stopping)
            }
            if stopping {
                for transfer in added + Array(running.values) {
                    curl_multi_remove_handle(multi, transfer.easy)
                    transfer.finish(.failure(HTTPClientError(.failed, "the HTTP pool was shut down")))
                }
                break
            }
            for transfer in added {
                if let error = transfer.configure() {
                    transfer.finish(.failure(error))
                } else {
                    running[transfer.easy] = transfer
                    curl_multi_add_handle(multi, transfer.easy)
                }
            }
            var active: Int32 = 0
            _ = curl_multi_perform(multi, &active)
            var remaining: Int32 = 0
            while let message = curl_multi_info_read(multi, &remaining) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let transfer = running.removeValue(forKey: easy)
                else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(multi, easy)
                transfer.finish(code == CURLE_OK ? .success(transfer.response()) : .failure(transfer.failure(code)))
            }
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        curl_multi_cleanup(multi)
        finished.signal()
    }
}

/// The multi handle, handed to the pool's thread. `@unchecked Sendable`: only that thread drives
/// it; other threads call `curl_multi_wakeup` alone (documented as callable from any thread), under
/// the pool's lock before the thread cleans the handle up.
private struct UncheckedMulti: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}

/// One request of an ``HTTPPool``. `@unchecked Sendable`: made by the caller, then touched only
/// by the pool's thread (curl's callbacks run on it) until `finish` hands the result over once.
final class PoolTransfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    private let request: HTTPPool.Request
    private let addressCheck: HTTPPool.AddressCheck
    private let completion: (Result<HTTPClient.Response, HTTPClientError>) -> Void
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var collected: [UInt8] = []
    /// The addresses `addressCheck` refused.
    private var refused: [String] = []
    private var done = false

    /// `nil` when libcurl cannot make an easy handle (out of memory).
    init?(
        _ request: HTTPPool.Request, addressCheck: @escaping HTTPPool.AddressCheck,
        completion: @escaping (Result<HTTPClient.Response, HTTPClientError>) -> Void
    ) {
        guard let easy = curl_easy_init() else { return nil }
        self.easy = easy
        self.request = request
        self.addressCheck = addressCheck
        self.completion = completion
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    func finish(_ result: Result<HTTPClient.Response, HTTPClientError>) {
        guard !done else { return }
        done = true
        completion(result)
    }

    /// Sets the request up; an error when it cannot be sent as given.
    func configure() -> HTTPClientError? {
        guard chime_curl_set_string(easy, CURLOPT_URL, request.url) == CURLE_OK else {
            return HTTPClientError(.badRequest, "cannot send to \(request.url.prefix(100)): not a URL curl takes")
        }
        _ = chime_curl_set_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = chime_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = chime_curl_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        _ = chime_curl_set_long(easy, CURLOPT_PIPEWAIT, 1)
        _ = chime_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(request.timeout * 1000))
        _ = chime_curl_set_long(easy, CURLOPT_TIMEOUT_MS, Int(request.timeout * 1000))
        _ = chime_curl_set_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        // Never through an `http_proxy` of the environment, and never where a redirect points.
        _ = chime_curl_set_string(easy, CURLOPT_PROXY, "")
        _ = chime_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        _ = chime_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = chime_curl_set_string(easy, CURLOPT_CUSTOMREQUEST, request.method)
        if request.method != "GET" {
            _ = chime_curl_set_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            request.body.withUnsafeBytes {
                _ = chime_curl_set_pointer(
                    easy, CURLOPT_COPYPOSTFIELDS,
                    UnsafeMutableRawPointer(mutating: $0.baseAddress ?? UnsafeRawPointer(errorBuffer)))
            }
        }
        if let error = CurlEasy.appendHeaders(request.headers, to: &headerList) { return error }
        _ = chime_curl_set_headers(easy, headerList)
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = chime_curl_set_write_function(easy) { pointer, size, count, context in
            guard let pointer, let context else { return 0 }
            let transfer = Unmanaged<PoolTransfer>.fromOpaque(context).takeUnretainedValue()
            transfer.collected.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: size * count))
            return size * count
        }
        _ = chime_curl_set_pointer(easy, CURLOPT_WRITEDATA, context)
        _ = chime_curl_set_opensocket_function(easy) { context, _, address in
            guard let context, let address else { return CURL_SOCKET_BAD }
            let transfer = Unmanaged<PoolTransfer>.fromOpaque(context).takeUnretainedValue()
            var bytes = [UInt8](repeating: 0, count: 16)
            let length = Int(chime_curl_sockaddr_ip(address, &bytes))
            let ip = Array(bytes.prefix(length))
            guard length > 0, transfer.addressCheck(transfer.request.url, ip) else {
                transfer.refused.append(
                    length == 4
                        ? ip.map(String.init).joined(separator: ".") : ip.map { String(format: "%02x", $0) }.joined())
                return CURL_SOCKET_BAD
            }
            return socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
        }
        _ = chime_curl_set_pointer(easy, CURLOPT_OPENSOCKETDATA, context)
        return nil
    }

    func response() -> HTTPClient.Response {
        var code = 0
        _ = chime_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &code)
        var headers = CurlEasy.responseHeaders(easy)
        var version = 0
        _ = chime_curl_get_long(easy, CURLINFO_HTTP_VERSION, &version)
        headers[":http-version"] =
            version == Int(CURL_HTTP_VERSION_2_0) ? "2" : version == Int(CURL_HTTP_VERSION_3) ? "3" : "1.1"
        return HTTPClient.Response(status: code, headers: headers, body: collected)
    }

    func failure(_ code: CURLcode) -> HTTPClientError {
        if !refused.isEmpty {
            return HTTPClientError(
                .permissionDenied,
                "refused to connect to \(refused.joined(separator: ", ")): not a public address, and \(request.url.prefix(60)) is not under a listed prefix",
                curlCode: Int(code.rawValue))
        }
        let detail = String(cString: errorBuffer)
        let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        let kind: HTTPClientError.Code =
            switch code {
            case CURLE_OPERATION_TIMEDOUT: .timedOut
            case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST: .noService
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE: .tls
            case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2,
                CURLE_HTTP2_STREAM:
                .connectionLost
            default: .failed
            }
        return HTTPClientError(kind, reason, curlCode: Int(code.rawValue))
    }
}
