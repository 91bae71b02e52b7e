import ChimeCore
import Foundation

/// Python's cryptography, PyJWT and http_ece (Tests/Support/CryptoInterop/interop.py), run as a
/// program: the other side of every check here is an implementation that is not Chime's.
package enum Interop {
    package static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// The environment's python, set up once per test process (scripts/crypto-test-env.sh).
    package static let python = Task<String, any Error> {
        let output = try await ChildProcess.run(packageRoot + "/scripts/crypto-test-env.sh", timeout: 600)
        guard output.termination.succeeded else {
            throw InteropFailure(what: "crypto-test-env.sh", output: output.errorText)
        }
        return output.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    package struct InteropFailure: Error, CustomStringConvertible {
        package var what: String
        package var output: String
        package var description: String { "\(what) failed: \(output)" }
        package init(what: String, output: String) {
            self.what = what
            self.output = output
        }
    }

    /// Runs one command of interop.py and returns its JSON answer.
    package static func run(_ arguments: String...) async throws -> JSONValue {
        let output = try await ChildProcess.run(
            try await python.value, arguments: [packageRoot + "/Tests/Support/CryptoInterop/interop.py"] + arguments,
            environment: ["PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"], timeout: 120)
        guard output.termination.succeeded else {
            throw InteropFailure(what: "interop.py \(arguments.first ?? "")", output: output.errorText)
        }
        return try JSONValue.parse(output.text)
    }
}

extension JSONValue {
    /// The string, when this is one.
    package var text: String? { if case .string(let text) = self { text } else { nil } }
}
