import CCurl
import Foundation
import Synchronization

/// One request on a curl easy handle, driven by a multi handle of its own on a thread of its own:
/// the thread sleeps in `curl_multi_poll` until the socket has bytes, curl's own timer is due, or
/// ``cancel()`` wakes it with `curl_multi_wakeup`. No spinning, and Swift's cooperative threads are
/// never blocked.
///
/// `@unchecked Sendable`: the handles are used only by the thread in ``run()``, except
/// `curl_multi_wakeup` (documented as callable from any thread), which ``cancel()`` calls under
/// `state`'s lock while the multi handle is alive.
final class CurlTransfer: @unchecked Sendable {
    struct Options {
        var url: String
        var unixSocket: String?
        var method: String
        var headers: [(String, String)]
        var body: [UInt8]?
        /// Limit for connecting; for the whole transfer too unless `streaming`.
        var timeout: Double
        var streaming: Bool
        var caFile: String?
        /// `sha256//<base64>`: trust the server whose certificate has this key (when no `caFile`).
        var pinnedPublicKey: String?
        /// The local address to connect from (TCP only), e.g. `127.0.0.2`.
        var localAddress: String?
    }

    private struct State {
        var multiAlive = false
        var cancelled = false
    }

    static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    private let options: Options
    private let state = Mutex(State())
    private let multi: UnsafeMutableRawPointer
    private let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// curl writes its detailed message here (CURLOPT_ERRORBUFFER keeps the pointer).
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// Called with each piece of a 2xx body as it arrives (streams); else the body is collected.
    private let onData: (@Sendable ([UInt8]) -> Void)?
    /// Called once with the final answer's status and header fields, as soon as its head is in.
    private let onResponse: (@Sendable (HTTPClient.Response) -> Void)?
    private var collected: [UInt8] = []
    private var status: Int?
    private var headReported = false

    init(
        _ options: Options, onResponse: (@Sendable (HTTPClient.Response) -> Void)? = nil,
        onData: (@Sendable ([UInt8]) -> Void)?
    ) throws(HTTPClientError) {
        guard Self.globalInit, let multi = curl_multi_init() else {
            throw HTTPClientError(.failed, "libcurl failed to start")
        }
        guard let easy = curl_easy_init() else {
            curl_multi_cleanup(multi)
            throw HTTPClientError(.failed, "libcurl failed to start")
        }
        self.options = options
        self.multi = multi
        self.easy = easy
        self.onData = onData
        self.onResponse = onResponse
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// Wakes ``run()``, which then ends with `CancellationError`.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if state.multiAlive { _ = curl_multi_wakeup(multi) }
        }
    }

    /// Performs the transfer on the calling thread (a thread of its own: this blocks).
    func run() throws -> HTTPClient.Response {
        defer {
            state.withLock { $0.multiAlive = false }
            curl_multi_remove_handle(multi, easy)
            curl_multi_cleanup(multi)
        }
        try configure()
        let alreadyCancelled = state.withLock { state -> Bool in
            state.multiAlive = true
            return state.cancelled
        }
        if alreadyCancelled { throw CancellationError() }
        curl_multi_add_handle(multi, easy)
        var running: Int32 = 1
        var result = CURLE_OK
        while true {
            let performed = curl_multi_perform(multi, &running)
            guard performed == CURLM_OK else {
                throw HTTPClientError(.failed, "libcurl: " + String(cString: curl_multi_strerror(performed)))
            }
            if running == 0 {
                var remaining: Int32 = 0
                while let message = curl_multi_info_read(multi, &remaining) {
                    if message.pointee.msg == CURLMSG_DONE { result = message.pointee.data.result }
                }
                break
            }
            if state.withLock({ $0.cancelled }) { throw CancellationError() }
            // Sleeps until the socket is ready, curl's next timeout, a wake-up, or a minute.
            let polled = curl_multi_poll(multi, nil, 0, 60_000, nil)
            guard polled == CURLM_OK else {
                throw HTTPClientError(.failed, "libcurl: " + String(cString: curl_multi_strerror(polled)))
            }
        }
        if state.withLock({ $0.cancelled }) { throw CancellationError() }
        guard result == CURLE_OK else { throw failure(result) }
        return HTTPClient.Response(status: responseStatus(), headers: responseHeaders(), body: collected)
    }

    // MARK: Set-up

    private func configure() throws(HTTPClientError) {
        func check(_ code: CURLcode, _ what: String) throws(HTTPClientError) {
            guard code == CURLE_OK else {
                throw HTTPClientError(
                    .badRequest, "cannot send \(what): " + String(cString: curl_easy_strerror(code)),
                    curlCode: Int(code.rawValue))
            }
        }
        try check(chime_curl_set_string(easy, CURLOPT_URL, options.url), "to \(options.url)")
        if let socket = options.unixSocket {
            try check(chime_curl_set_string(easy, CURLOPT_UNIX_SOCKET_PATH, socket), "over the socket \(socket)")
        }
        // A path is sent as the caller wrote it (curl would otherwise squash `/../`).
        _ = chime_curl_set_long(easy, CURLOPT_PATH_AS_IS, 1)
        _ = chime_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
        // HTTP/2 where TLS offers it (ALPN), as `chime serve --tls-cert` does; HTTP/1.1 in the clear.
        _ = chime_curl_set_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        _ = chime_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(options.timeout))
        if !options.streaming { _ = chime_curl_set_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(options.timeout)) }
        _ = chime_curl_set_long(easy, CURLOPT_TCP_KEEPALIVE, 1)
        // The service is reached directly, never through an `http_proxy` from the environment.
        _ = chime_curl_set_string(easy, CURLOPT_PROXY, "")
        if let caFile = options.caFile {
            try check(chime_curl_set_string(easy, CURLOPT_CAINFO, caFile), "with the CA file \(caFile)")
        } else if let pin = options.pinnedPublicKey {
            // The pin is the whole of the trust: the key must be this one (curl checks it whether
            // or not the chain is verified), so a self-signed certificate, or one naming another
            // host than the address connected to, is taken; any other key is refused.
            try check(
                chime_curl_set_string(easy, CURLOPT_PINNEDPUBLICKEY, pin), "with the pinned key \(pin.prefix(20))…")
            _ = chime_curl_set_long(easy, CURLOPT_SSL_VERIFYPEER, 0)
            _ = chime_curl_set_long(easy, CURLOPT_SSL_VERIFYHOST, 0)
        }
        // `host!` makes curl take the text as an address or host name, never as an interface name.
        if let address = options.localAddress {
            try check(
                chime_curl_set_string(easy, CURLOPT_INTERFACE, "host!" + address), "from the local address \(address)")
        }
        _ = chime_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)

        switch options.method {
        case "GET" where options.body == nil: _ = chime_curl_set_long(easy, CURLOPT_HTTPGET, 1)
        case "HEAD": _ = chime_curl_set_long(easy, CURLOPT_NOBODY, 1)
        default:
            guard !options.method.isEmpty, options.method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw HTTPClientError(.badRequest, "the HTTP method '\(options.method)' is not a single word")
            }
            try check(chime_curl_set_string(easy, CURLOPT_CUSTOMREQUEST, options.method), options.method)
        }
        if let body = options.body, !body.isEmpty {
            // curl copies the body (COPYPOSTFIELDS), so the array need not outlive this call.
            _ = chime_curl_set_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            body.withUnsafeBytes {
                _ = chime_curl_set_pointer(
                    easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress))
            }
        } else if options.body != nil || ["POST", "PUT", "PATCH"].contains(options.method) {
            _ = chime_curl_set_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, 0)
            _ = chime_curl_set_string(easy, CURLOPT_COPYPOSTFIELDS, "")
        }

        if let error = CurlEasy.appendHeaders(options.headers, to: &headerList) { throw error }
        _ = chime_curl_set_headers(easy, headerList)

        _ = chime_curl_set_write_function(easy) { CurlTransfer.handOver($0, $1 * $2, $3) { $0.received($1) } }
        _ = chime_curl_set_pointer(easy, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque())
        if onResponse != nil {
            _ = chime_curl_set_header_function(easy) { CurlTransfer.handOver($0, $1 * $2, $3) { $0.headerLine($1) } }
            _ = chime_curl_set_pointer(easy, CURLOPT_HEADERDATA, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    /// For curl's callbacks, which cannot capture: the transfer `context` points at gets the
    /// `count` bytes at `pointer`; returns how many were taken (all, or 0 to make curl stop).
    private static func handOver(
        _ pointer: UnsafeMutablePointer<CChar>?, _ count: Int, _ context: UnsafeMutableRawPointer?,
        _ take: (CurlTransfer, UnsafeRawBufferPointer) -> Void
    ) -> Int {
        guard let pointer, let context else { return 0 }
        take(
            Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue(),
            UnsafeRawBufferPointer(start: pointer, count: count))
        return count
    }

    /// curl hands over each line of each answer's head (interim 1xx answers too) and ends every
    /// head with an empty line; after the final answer's, its status and fields are complete and
    /// go to `onResponse`. Trailer fields after a chunked body come through here too, and are ignored.
    private func headerLine(_ line: UnsafeRawBufferPointer) {
        guard !headReported, let onResponse, line.allSatisfy({ $0 == 13 || $0 == 10 }) else { return }
        let code = responseStatus()
        guard code >= 200 else { return }
        headReported = true
        status = code
        onResponse(HTTPClient.Response(status: code, headers: responseHeaders(), body: []))
    }

    /// A 2xx body goes to `onData` as it comes; any other body is collected for the error.
    private func received(_ bytes: UnsafeRawBufferPointer) {
        if status == nil { status = responseStatus() }
        if let onData, let status, (200..<300).contains(status) {
            onData(Array(bytes))
        } else {
            collected.append(contentsOf: bytes)
        }
    }

    // MARK: The answer

    private func responseStatus() -> Int {
        var code = 0
        _ = chime_curl_get_long(easy, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// The last answer's header fields, as curl parsed them.
    private func responseHeaders() -> [String: String] { CurlEasy.responseHeaders(easy) }

    private func failure(_ code: CURLcode) -> Failure {
        let detail = String(cString: errorBuffer)
        var osError = 0
        _ = chime_curl_get_long(easy, CURLINFO_OS_ERRNO, &osError)
        return Failure(
            code: code, osError: Int32(osError),
            reason: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
    }

    /// curl's failure, for ``HTTPClient`` to say what it means.
    struct Failure: Error {
        var code: CURLcode
        /// `errno` of the failed connect or receive, 0 when none.
        var osError: Int32
        var reason: String
    }

    private static func milliseconds(_ seconds: Double) -> Int { Int(max(1, (seconds * 1000).rounded())) }
}
