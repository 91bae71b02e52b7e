import Foundation
import TestThreads
import Testing

@testable import ChimeServer

/// What an app started by the service (background launch) gets of the service's environment.
@Suite("A launched app's environment", .testThreads)
struct LaunchEnvironmentTests {
    @Test("only the documented variables and LC_* are inherited: no database password, URL or credentials")
    func scrubbed() {
        let service = [
            "PATH": "/usr/bin:/bin", "HOME": "/home/chime", "LANG": "C.UTF-8", "LC_TIME": "de_DE.UTF-8",
            "DISPLAY": ":0",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus", "XDG_RUNTIME_DIR": "/run/user/1000",
            "PGPASSWORD": "hunter2", "PGPASSFILE": "/home/chime/.pgpass",
            "CHIME_DATABASE_URL": "postgresql://chime:pw@db/chime",
            "CHIME_STORE": "/var/lib/chime", "AWS_SECRET_ACCESS_KEY": "secret", "GITHUB_TOKEN": "ghp_x",
            "LD_PRELOAD": "/tmp/evil.so",
        ]
        let launched = AppLauncher.scrubbed(service)
        #expect(
            Set(launched.keys) == [
                "PATH", "HOME", "LANG", "LC_TIME", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR",
            ])
        #expect(launched["PATH"] == "/usr/bin:/bin")
        #expect(!launched.values.contains { $0.contains("hunter2") || $0.contains("pw@") })
    }
}
