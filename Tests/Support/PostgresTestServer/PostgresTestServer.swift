import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL server of the tests' own: Debian's `postgresql` binaries, `initdb` into a fresh
/// temporary directory (as the `postgres` user when running as root, since PostgreSQL refuses to
/// run as root), listening on a free loopback port only, stopped and removed at the end.
///
/// ```swift
/// let server = try PostgresTestServer.shared()        // one per test process, stopped at exit
/// let url = try server.makeSchema()                     // a fresh, empty schema: a URL for it
/// let store = try PostgresStore(url: url)
/// ```
///
/// Every wait is bounded (start 60 s, stop 20 s, each command 60 s). The directory and the server
/// go away at exit, and a watchdog process removes them even if the test process is killed.
public final class PostgresTestServer: Sendable {
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The cluster's directory (data, log).
    public let directory: String
    private let binaries: String
    private let runsAsPostgres: Bool
    /// The postmaster (a new one after each ``restart(_:)``); `nil` for a server the tests did not
    /// start (``externalPortVariable``).
    private let postmaster: Mutex<ChildProcess?>
    private let durable: Bool
    private let stopped = Mutex(false)
    private let counter = Mutex(0)

    private static let sharedServer = Mutex<Result<PostgresTestServer, TestServerError>?>(nil)

    /// When set (by `scripts/with-test-postgres.sh`, which `make test` runs the suite under), the
    /// port on 127.0.0.1 of a server started before the test process: ``shared()`` uses it instead
    /// of starting one, so no test waits for `initdb` — a start inside the process blocked the
    /// threads of Swift's concurrency pool (two on this machine) for seconds, and service tests
    /// timed out meanwhile.
    public static let externalPortVariable = "CHIME_TEST_POSTGRES_PORT"

    /// The process's server: the one ``externalPortVariable`` names, or one started on first use
    /// and stopped when the process exits.
    public static func shared() throws -> PostgresTestServer {
        try sharedServer.withLock { shared -> Result<PostgresTestServer, TestServerError> in
            if let shared { return shared }
            if let text = ProcessInfo.processInfo.environment[externalPortVariable], let port = Int(text) {
                let external = Result { () throws(TestServerError) -> PostgresTestServer in
                    try PostgresTestServer(external: port)
                }
                shared = external
                return external
            }
            let result = Result { () throws(TestServerError) -> PostgresTestServer in
                try PostgresTestServer(durable: false)
            }
            if case .success = result { atexit { PostgresTestServer.stopShared() } }
            shared = result
            return result
        }.get()
    }

    private static func stopShared() {
        if case .success(let server)? = sharedServer.withLock({ $0 }) { server.stop() }
    }

    /// A server of its own for one test, started on a thread outside Swift's concurrency pool (an
    /// `initdb` and a start take seconds, which would hold one of the pool's few threads).
    public static func start(durable: Bool) async throws -> PostgresTestServer {
        try await offPool { () throws(TestServerError) in try PostgresTestServer(durable: durable) }
    }

    /// Runs `body` on a thread of its own and returns its result.
    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws(TestServerError) -> T) async throws
        -> T
    {
        try await OffPool.run("test.postgres") { try body() }
    }

    /// A server already running on `port` (see ``externalPortVariable``): never stopped or
    /// restarted from here.
    private init(external port: Int) throws(TestServerError) {
        binaries = try Self.findBinaries()
        runsAsPostgres = getuid() == 0
        durable = false
        self.port = port
        directory = ""
        postmaster = Mutex(nil)
    }

    /// Starts a server.
    ///
    /// - Parameter durable: `false` turns off `fsync` and synchronous commits (tests, which never
    ///   lose power); `true` keeps PostgreSQL's defaults (benchmarks).
    public init(durable: Bool) throws(TestServerError) {
        binaries = try Self.findBinaries()
        runsAsPostgres = getuid() == 0
        self.durable = durable
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("chime-pg-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else {
            throw TestServerError(
                "cannot create a temporary directory for PostgreSQL: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        if runsAsPostgres {
            guard let user = getpwnam("postgres") else {
                throw TestServerError(
                    "running as root, and there is no postgres user to run PostgreSQL as (install Debian's postgresql package)"
                )
            }
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        do throws(TestServerError) {
            _ = try Self.run(
                [
                    "initdb", "-D", directory + "/data", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C",
                    "--no-sync",
                ],
                binaries: binaries, asPostgres: runsAsPostgres)
            var lastError = TestServerError("PostgreSQL did not start")
            var started: (port: Int, process: ChildProcess)?
            for _ in 0..<3 where started == nil {
                let candidate = try Self.freePort()
                do {
                    started = (
                        candidate,
                        try Self.startPostmaster(
                            binaries: binaries, directory: directory, port: candidate,
                            durable: durable, asPostgres: runsAsPostgres)
                    )
                } catch {
                    lastError = error
                }
            }
            guard let started else { throw lastError }
            port = started.port
            postmaster = Mutex(started.process)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        startWatchdog()
    }

    /// Runs `postgres` itself (not through `pg_ctl`, so its process is ours to signal) and waits
    /// until its pid file says it is ready, at most 60 s.
    private static func startPostmaster(
        binaries: String, directory: String, port: Int, durable: Bool,
        asPostgres: Bool
    ) throws(TestServerError) -> ChildProcess {
        var settings = [
            "-c", "listen_addresses=127.0.0.1", "-p", "\(port)", "-c", "unix_socket_directories=", "-c",
            "max_connections=200",
        ]
        if !durable { settings += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] }
        let program = ["\(binaries)/postgres", "-D", directory + "/data"] + settings
        let command = asPostgres ? asPostgresUser(program) : program
        _ = FileManager.default.createFile(atPath: directory + "/log", contents: nil)
        if asPostgres, let user = getpwnam("postgres") {
            chown(directory + "/log", user.pointee.pw_uid, user.pointee.pw_gid)
        }
        guard let log = FileHandle(forWritingAtPath: directory + "/log") else {
            throw TestServerError("cannot write \(directory)/log")
        }
        log.seekToEndOfFile()
        defer { try? log.close() }
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: command[0], arguments: Array(command.dropFirst()), directory: "/",
                stdin: .null, stdout: .file(log), stderr: .file(log))
        } catch {
            throw TestServerError("cannot start \(program[0]): \(error)")
        }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let end = process.exited {
                let text = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
                throw TestServerError("PostgreSQL exited at start (\(end)):\n\(text.suffix(1500))")
            }
            if let pidFile = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8) {
                let lines = pidFile.split(separator: "\n", omittingEmptySubsequences: false)
                if lines.count > 7, lines[0] == "\(process.pid)",
                    lines[7].trimmingCharacters(in: .whitespaces) == "ready"
                {
                    return process
                }
            }
            usleep(20_000)
        }
        process.signal(SIGKILL)
        process.wait(timeout: 10)
        throw TestServerError("PostgreSQL did not become ready within 60 s; see \(directory)/log")
    }

    /// `postgresql://postgres@127.0.0.1:PORT/DATABASE`, with extra libpq parameters.
    public func url(database: String = "postgres", parameters: String = "") -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)" + (parameters.isEmpty ? "" : "?" + parameters)
    }

    /// The next number of this process's schemas and databases (names never repeat).
    private func nextNumber() -> Int {
        counter.withLock { count in
            count += 1
            return count
        }
    }

    /// A fresh, empty schema in the `postgres` database; returns a URL whose connections use it.
    public func makeSchema() throws(TestServerError) -> String {
        let name = "t\(getpid())_\(nextNumber())_\(UInt32.random(in: 0...UInt32.max))"
        try sql("CREATE SCHEMA \(name)")
        return url(parameters: "options=-csearch_path%3D\(name)")
    }

    /// A fresh, empty database; returns its URL.
    public func makeDatabase() throws(TestServerError) -> String {
        let name = "db\(getpid())_\(nextNumber())_\(UInt32.random(in: 0...UInt32.max))"
        try sql("CREATE DATABASE \(name)")
        return url(database: name)
    }

    /// Runs SQL with `psql` (fixed test SQL only), returns its output.
    @discardableResult
    public func sql(_ text: String, database: String = "postgres", parameters: String = "") throws(TestServerError)
        -> String
    {
        try run(
            [
                "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d",
                url(database: database, parameters: parameters), "-c", text,
            ],
            asPostgres: false)
    }

    /// Stops the server (fast shutdown: SIGINT; after 20 s SIGKILL) and removes its directory.
    /// Calling it again does nothing.
    public func stop() {
        guard
            stopped.withLock({ stopped in
                defer { stopped = true }
                return !stopped
            })
        else { return }
        guard let process = postmaster.withLock({ $0 }) else { return }
        Self.end(process, signal: SIGINT)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// How ``restart(_:)`` stops the server.
    public enum Shutdown: Sendable {
        /// SIGINT: sessions are ended, a checkpoint is written.
        case fast
        /// SIGQUIT: every process quits at once, no checkpoint; the next start recovers from the
        /// write-ahead log, as after a crash.
        case immediate
    }

    /// Stops the server as `shutdown` says and starts it again on the same port and data, waiting
    /// until it accepts connections again (at most 60 s). Connections open before are broken.
    /// Runs on a thread of its own (see ``start(durable:)``).
    public func restart(_ shutdown: Shutdown) async throws {
        await halt(shutdown)
        try await resume()
    }

    /// Stops the server as `shutdown` says, keeping its data; ``resume()`` starts it again. Runs on
    /// a thread of its own.
    public func halt(_ shutdown: Shutdown) async {
        _ = try? await Self.offPool { [self] () throws(TestServerError) in
            if let process = postmaster.withLock({ $0 }) {
                Self.end(process, signal: shutdown == .fast ? SIGINT : SIGQUIT)
            }
        }
    }

    /// Starts the server ``halt(_:)`` stopped, on the same port and data, and waits until it
    /// accepts connections (at most 60 s), on a thread of its own.
    public func resume() async throws {
        try await Self.offPool { [self] () throws(TestServerError) in
            try postmaster.withLock { process throws(TestServerError) in
                guard let current = process else {
                    throw TestServerError("a server the tests did not start is not restarted")
                }
                guard current.exited != nil else { return }
                process = try Self.startPostmaster(
                    binaries: binaries, directory: directory, port: port, durable: durable,
                    asPostgres: runsAsPostgres)
            }
        }
    }

    /// Signals the postmaster and waits for it to exit (SIGKILL after 20 s).
    private static func end(_ process: ChildProcess, signal: Int32) {
        process.signal(signal)
        if process.wait(timeout: 20) == nil {
            process.signal(SIGKILL)
            process.wait(timeout: 10)
        }
    }

    // MARK: Processes

    /// The directory of `initdb` and `pg_ctl`: Debian keeps them out of PATH, in
    /// /usr/lib/postgresql/VERSION/bin (the newest is used).
    private static func findBinaries() throws(TestServerError) -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(
            by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/initdb") {
            return String(directory)
        }
        throw TestServerError(
            "PostgreSQL's initdb was not found in /usr/lib/postgresql/*/bin or PATH; run scripts/install-deps.sh test (Debian's postgresql package)"
        )
    }

    /// Runs a PostgreSQL program (as the postgres user when root), waiting at most 60 s.
    @discardableResult
    private func run(_ arguments: [String], asPostgres: Bool = true) throws(TestServerError) -> String {
        try Self.run(arguments, binaries: binaries, asPostgres: asPostgres && runsAsPostgres)
    }

    private static func run(_ arguments: [String], binaries: String, asPostgres: Bool) throws(TestServerError) -> String
    {
        let program =
            arguments[0] == "psql" && !FileManager.default.isExecutableFile(atPath: "\(binaries)/psql")
            ? "/usr/bin/psql" : "\(binaries)/\(arguments[0])"
        let command = asPostgres ? asPostgresUser([program] + arguments.dropFirst()) : [program] + arguments.dropFirst()
        let result: ChildProcess.Output
        do {
            result = try ChildProcess.run(
                command[0], arguments: Array(command.dropFirst()), directory: "/", errors: .merged, timeout: 60)
        } catch {
            throw TestServerError("cannot run \(arguments[0]): \(error)")
        }
        guard result.termination.succeeded else {
            throw TestServerError(
                "\(arguments.prefix(2).joined(separator: " ")) failed (\(result.termination)): \(result.text.suffix(1500))"
            )
        }
        return result.text
    }

    /// `command` run as the postgres user (`setpriv`), for a test process running as root.
    private static func asPostgresUser(_ command: [String]) -> [String] {
        ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + command
    }

    /// A process that outlives a killed test process long enough to stop the server and remove
    /// its directory (it polls the test process once a second).
    private func startWatchdog() {
        // The postmaster's pid from its pid file, so that a restarted server is found too.
        let pid = "$(head -n 1 '\(directory)/data/postmaster.pid' 2>/dev/null)"
        let script =
            "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; p=\(pid); [ -n \"$p\" ] && kill -INT $p 2>/dev/null; "
            + "for i in $(seq 40); do [ -n \"$p\" ] && kill -0 $p 2>/dev/null || break; sleep 0.5; done; [ -n \"$p\" ] && kill -KILL $p 2>/dev/null; rm -rf '\(directory)'"
        // In a session of its own, so it outlives the test process's group; reaped by its own
        // thread when it ends (an unreaped child is a zombie that Swift Testing's exit-test monitor,
        // waiting on every child, spins on).
        _ = try? ChildProcess(
            executable: "/bin/sh", arguments: ["-c", script], stdout: .null, stderr: .null, newSession: true)
    }

    /// A TCP port free on 127.0.0.1 right now.
    public static func freePort() throws(TestServerError) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestServerError("cannot open a socket to find a free port") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw TestServerError("cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why the test server could not do what was asked.
public struct TestServerError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
