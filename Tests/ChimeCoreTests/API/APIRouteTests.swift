import ChimeCore
import TestThreads
import Testing

@Suite("API routes", .testThreads)
struct APIRouteTests {
    @Test("a declaration's path has each parameter percent-encoded as one segment, as the service decodes it")
    func path() {
        #expect(APIRoute.health.path() == "/healthz")
        #expect(APIRoute.webCenter.path() == "/")
        #expect(APIRoute.listRequests.path(["app": "com.example.alarm"]) == "/v1/apps/com.example.alarm/requests")
        #expect(
            APIRoute.respond.path(["app": "com.example.chat", "identifier": "chat/42 ü?#%"])
                == "/v1/apps/com.example.chat/notifications/chat%2F42%20%C3%BC%3F%23%25/responses")
        #expect(APIRoute.acknowledge.path(["app": "a b", "id": "17"]) == "/v1/apps/a%20b/responses/17/ack")
        // An empty value stays an empty segment (the service answers 404), as clients sent it before.
        #expect(APIRoute.getSettings.path(["app": ""]) == "/v1/apps//settings")
    }

    @Test("a declaration knows its method, parameters and segments")
    func parts() {
        #expect(APIRoute.respond.method == .post)
        #expect(APIRoute.respond.parameters == ["app", "identifier"])
        #expect(APIRoute.respond.description == "POST /v1/apps/{app}/notifications/{identifier}/responses")
        #expect(APIRoute.push.segments == [.literal("3"), .literal("device"), .parameter("token")])
        #expect(APIRoute.webCenter.segments == [.literal("")])
        #expect(APIRoute.listApps.parameters.isEmpty)
    }

    @Test("filling a template with other parameters than its own stops with a message naming the route")
    func wrongParameters() async {
        let missing = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = APIRoute.respond.path(["app": "com.example.chat"])
        }
        let stderr = String(decoding: missing?.standardErrorContent ?? [], as: UTF8.self)
        let expected =
            #"POST /v1/apps/{app}/notifications/{identifier}/responses takes the parameters ["app", "identifier"], not ["app"]"#
        #expect(stderr.contains(expected), "\(stderr)")
        await #expect(processExitsWith: .failure) {
            _ = APIRoute.getSettings.path(["app": "a", "identifer": "typo"])
        }
    }
}
