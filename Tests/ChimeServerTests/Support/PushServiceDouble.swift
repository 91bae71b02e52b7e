import ChimeCore
import ChimeHTTP
import CryptoInterop
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The loopback Web Push service of `Tests/Support/CryptoInterop/push_service.py`: it hands out
/// subscriptions (keys made by Python's cryptography), decrypts every push it receives with http_ece
/// and verifies its VAPID token with PyJWT, records it, and answers as told.
final class PushServiceDouble: Sendable {
    let process: ChildProcess
    let port: Int
    let directory: String
    var origin: String { "http://127.0.0.1:\(port)" }
    private var http: HTTPClient { HTTPClient(endpoint: try! HTTPEndpoint(origin), timeout: 60) }

    private init(process: ChildProcess, port: Int, directory: String) {
        self.process = process
        self.port = port
        self.directory = directory
    }

    static func start() async throws -> PushServiceDouble {
        let directory = NSTemporaryDirectory() + "chime-push-double-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let portFile = directory + "/port.json"
        let process = try ChildProcess(
            executable: try await Interop.python.value,
            arguments: [Interop.packageRoot + "/Tests/Support/CryptoInterop/push_service.py", portFile],
            environment: ["PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"])
        // The double writes its port file (renamed into place) once it listens.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let data = FileManager.default.contents(atPath: portFile),
                case .integer(let port)? = try? JSONValue.parse(data)["port"]
            {
                return PushServiceDouble(process: process, port: Int(port), directory: directory)
            }
            guard process.isRunning else { break }
            try await Sleep.for(.milliseconds(20))
        }
        process.signal(SIGKILL)
        throw TestClientError(description: "the push service double did not start")
    }

    /// A new subscriber: what its browser's `PushSubscription.toJSON()` would give.
    func subscribe() async throws -> String {
        try await http.request("POST", "/subscribe").text
    }

    /// The next answers for a subscriber (its id is the endpoint's last segment).
    func answer(_ subscriber: String, _ statuses: [Int], retryAfter: String? = nil) async throws {
        var object: JSONObject = ["statuses": .array(statuses.map { .integer(Int64($0)) })]
        if let retryAfter { object["retryAfter"] = .string(retryAfter) }
        _ = try await http.request(
            "POST", "/answers/\(subscriber)", headers: [("Content-Type", "application/json")],
            body: JSONValue.object(object).serializedBytes())
    }

    /// Holds the next `count` pushes unanswered, each until its sender closes the connection (a
    /// sender cut off as it stops); held pushes are not recorded.
    func hold(_ count: Int) async throws {
        _ = try await http.request(
            "POST", "/hold", headers: [("Content-Type", "application/json")],
            body: JSONValue.object(["count": .integer(Int64(count))]).serializedBytes())
    }

    /// How many pushes are held now and how many were let go (their sender closed), once at least
    /// `count` are held and `released` were let go; fewer after `timeout` seconds is an error that says so.
    func held(atLeast count: Int, released wanted: Int = 0, timeout: Int = 60) async throws -> (
        holding: Int, released: Int
    ) {
        let client = HTTPClient(endpoint: try HTTPEndpoint(origin), timeout: Double(timeout + 30))
        let answer = try await client.request("GET", "/held?count=\(count)&released=\(wanted)&timeout=\(timeout)").json
        guard case .integer(let holding)? = answer?["holding"], case .integer(let released)? = answer?["released"]
        else {
            throw TestClientError(description: "the double answered \(answer ?? .null)")
        }
        guard holding >= count, released >= wanted else {
            throw TestClientError(
                description:
                    "the push service held \(holding) of \(count) pushes and let go \(released) of \(wanted) within \(timeout) s"
            )
        }
        return (Int(holding), Int(released))
    }

    /// Every request received, once at least `count` were (the double waits, at most `timeout` s).
    /// Fewer than `count` after `timeout` is an error that says so (the client waits 30 s longer
    /// than the double, so it is never the client's own time-out that answers).
    func requests(atLeast count: Int, timeout: Int = 60) async throws -> [JSONValue] {
        let client = HTTPClient(endpoint: try HTTPEndpoint(origin), timeout: Double(timeout + 30))
        let response = try await client.request("GET", "/wait?count=\(count)&timeout=\(timeout)")
        guard case .array(let items)? = response.json else {
            throw TestClientError(description: "the double answered \(response.text)")
        }
        guard items.count >= count else {
            throw TestClientError(
                description: "the push service received \(items.count) of \(count) pushes within \(timeout) s: \(items)"
            )
        }
        return items
    }

    func stop() async {
        process.signal(SIGTERM)
        _ = await process.termination(within: .seconds(10))
        try? FileManager.default.removeItem(atPath: directory)
    }
}
