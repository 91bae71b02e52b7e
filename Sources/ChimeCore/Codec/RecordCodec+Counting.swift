import Foundation

#if DEBUG
    import Glibc

    // How many records this thread encodes: for the tests that hold the hot paths to encoding each
    // thing once (debug builds only: a release build counts nothing and pays nothing).

    extension RecordCodec {
        /// Encodes counted while ``countingEncodes(_:)`` runs on this thread.
        package struct EncodeCount: Sendable, Equatable, CustomStringConvertible {
            /// Notification requests encoded, including those inside a delivered record or an event.
            package var requests = 0
            /// Events encoded.
            package var events = 0

            package init(requests: Int = 0, events: Int = 0) {
                self.requests = requests
                self.events = events
            }

            package var description: String { "\(requests) requests, \(events) events" }
        }

        /// Runs `body` and counts the records encoded on this thread meanwhile (not on others, so
        /// tests running beside it do not count). Call it where the encoding happens: on the engine's
        /// writer, inside the job.
        ///
        /// ```swift
        /// let (_, count) = RecordCodec.countingEncodes { RecordCodec.encode(request) }
        /// assert(count.requests == 1)
        /// ```
        package static func countingEncodes<T>(_ body: () throws -> T) rethrows -> (result: T, count: EncodeCount) {
            let counter = UnsafeMutablePointer<EncodeCount>.allocate(capacity: 1)
            counter.initialize(to: EncodeCount())
            let outer = pthread_getspecific(counterKey)
            pthread_setspecific(counterKey, counter)
            defer {
                pthread_setspecific(counterKey, outer)
                counter.deinitialize(count: 1)
                counter.deallocate()
            }
            let result = try body()
            return (result, counter.pointee)
        }

        /// Adds one to this thread's count, when one is being kept.
        static func counted(_ kind: WritableKeyPath<EncodeCount, Int>) {
            guard let raw = pthread_getspecific(counterKey) else { return }
            raw.assumingMemoryBound(to: EncodeCount.self).pointee[keyPath: kind] += 1
        }

        private static let counterKey: pthread_key_t = {
            var key = pthread_key_t()
            precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key for RecordCodec's encode count")
            return key
        }()
    }
#endif
