import Foundation
import TestThreads
import Testing

@testable import ChimeServer

@Suite("Header field text", .testThreads)
struct FieldTextTests {
    /// Values with ASCII and Unicode spaces at their ends (U+00A0, U+2003, U+3000 are in
    /// `.whitespaces`; U+200B and a combining mark are not), tabs, line ends and nothing at all.
    static let values = [
        "", " ", "\t", "a", " a ", "\ta b\t", "  application/json ; charset=utf-8", "\u{A0}x\u{A0}",
        " \u{2003}x \u{3000}", "\u{200B}x\u{200B}", " \u{301}x", "x\r\n", " \r\n ", "é ", " ü", "\u{A0}", " \t \u{A0} ",
    ]

    @Test(
        "trimming is Foundation's trimmingCharacters(in: .whitespaces), for ASCII and Unicode spaces", arguments: values
    )
    func trimmed(_ value: String) {
        #expect(String(FieldText.trimmed(value)) == value.trimmingCharacters(in: .whitespaces))
        #expect(String(FieldText.trimmed(Substring(value))) == value.trimmingCharacters(in: .whitespaces))
    }

    @Test("field names compare as lowercased, without the copy")
    func names() {
        #expect(FieldText.equalsLowercase("Content-Length", "content-length"))
        #expect(FieldText.equalsLowercase("HOST", "host"))
        #expect(!FieldText.equalsLowercase("Hosts", "host"))
        #expect(!FieldText.equalsLowercase("Hos", "host"))
        #expect(!FieldText.equalsLowercase("Höst", "host"))
        #expect(!FieldText.equalsLowercase("", "host"))
        #expect(FieldText.equalsLowercase("BeArEr", "bearer"))
    }

    @Test("the token bytes are RFC 9110's tchar: letters, digits and !#$%&'*+-.^_`|~, nothing else")
    func tokenBytes() {
        let tchar = Set(Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~".utf8))
        for byte in UInt8.min...UInt8.max {
            #expect(RequestChecks.isTokenByte(byte) == tchar.contains(byte), "\(byte)")
        }
    }

    @Test("framing answers as before: Host once, Content-Length and Transfer-Encoding apart, codings ending in chunked")
    func framing() {
        func check(_ version: String, _ fields: [(String, String)]) -> String? {
            RequestChecks.framing(version: version, fields: fields.map { (name: $0.0, value: $0.1) }).map {
                "\($0.status) \($0.message)"
            }
        }
        #expect(check("HTTP/1.1", [("Host", "a"), ("Content-Length", " 12 ")]) == nil)
        #expect(check("HTTP/1.1", [("HOST", "a"), ("content-length", "3, 3")]) == nil)
        #expect(
            check("HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "gzip, Chunked")])
                == "501 the transfer coding \"gzip\" is not implemented; send Transfer-Encoding: chunked alone")
        #expect(check("HTTP/1.1", [("Content-Length", "1")]) == "400 an HTTP/1.1 request needs a Host header field")
        #expect(check("HTTP/1.0", [("Content-Length", "1")]) == nil)
        #expect(
            check("HTTP/1.1", [("Host", "a"), ("host", "b")]) == "400 the request has 2 Host header fields; send one")
        #expect(
            check("HTTP/1.1", [("Host", "a"), ("Content-Length", "1"), ("Transfer-Encoding", "chunked")])
                == "400 the request has both Content-Length and Transfer-Encoding; send one of them")
        #expect(
            check("HTTP/1.1", [("Host", "a"), ("Content-Length", ""), ("Transfer-Encoding", " ")])
                == "400 the request has both Content-Length and Transfer-Encoding; send one of them")
        #expect(
            check("HTTP/1.0", [("Transfer-Encoding", "chunked")])
                == "400 Transfer-Encoding is not allowed in an HTTP/1.0 request")
        #expect(
            check("HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "chunked, gzip")])
                == "400 the request's transfer codings (chunked, gzip) must end with chunked")
        #expect(
            check("HTTP/1.1", [("Host", "a"), ("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")])
                == "400 chunked is applied more than once")
        #expect(
            check("HTTP/1.1", [("Host", "a"), ("Content-Length", "3"), ("Content-Length", "4")])
                == "400 the request has Content-Length values that disagree (3, 4)")
        #expect(
            check("HTTP/1.1", [("Host", "a"), ("Content-Length", "+3")])
                == "400 Content-Length \"+3\" is not a number of bytes")
        #expect(RequestChecks.listElements(" a ,, b\t,\u{A0}c ") == ["a", "b", "c"])
    }
}
