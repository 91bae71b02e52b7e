import ChimeTesting
import Testing

/// Keeps tests that install a simulator (in any test target) from running at the same time.
struct InstallsSimulator: SuiteTrait, TestTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        try await NotificationSimulator.exclusively(function)
    }
}
