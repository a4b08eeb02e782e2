import Foundation
import Glibc
import Synchronization

/// A fixed set of long-lived threads that run jobs in the order they came.
/// Generation is CPU-bound; more threads than cores only adds contention.
///
/// A job may leave its thread to wait for something else (a sync) and come
/// back later (`handOff`, then `resume` or `release`): it counts as pending
/// all along, in one count kept under one lock, so that the bound on queued
/// documents holds exactly.
public final class WorkerPool: Sendable {
    private struct State {
        var queue: [@Sendable () -> Void] = []
        var head = 0
        /// Run before `queue`: jobs that come back to finish what they started.
        var urgent: [@Sendable () -> Void] = []
        var stopping = false
        var busy = 0
        /// Jobs handed off, waiting elsewhere to come back.
        var held = 0
    }

    /// What a pool thread knows of the work it runs (only that thread uses it).
    private final class Running {
        var handedOff = false
    }

    private static let runningKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    public let size: Int

    public init(size: Int, name: String = "worker") {
        self.size = size
        for i in 0..<size {
            let thread = Thread { [self] in self.work() }
            thread.name = "\(name)-\(i)"
            thread.start()
        }
    }

    /// Queues `work`; false when the pool is shutting down and did not take it.
    @discardableResult
    public func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            s.queue.append(work)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// The job running on this thread goes on elsewhere (it waits for a
    /// sync): it stops counting as running here and counts as held until it
    /// comes back (`resume`) or ends elsewhere (`release`).
    public func handOff() {
        let running = pthread_getspecific(Self.runningKey).map { Unmanaged<Running>.fromOpaque($0).takeUnretainedValue() }
        state.withLock { s in
            if let running, !running.handedOff {
                running.handedOff = true
                s.busy -= 1
            }
            s.held += 1
        }
    }

    /// A held job comes back, before the documents not yet claimed (what is
    /// started gets finished first). False when the pool is shutting down:
    /// the caller runs it itself.
    @discardableResult
    public func resume(_ work: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { s -> Bool in
            s.held -= 1
            guard !s.stopping else { return false }
            s.urgent.append(work)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// A held job ended elsewhere.
    public func release() {
        state.withLock { $0.held -= 1 }
    }

    /// Jobs queued or running (not those held elsewhere).
    public var working: Int { state.withLock { $0.queue.count - $0.head + $0.urgent.count + $0.busy } }

    /// Jobs queued, running or held.
    public var pending: Int { state.withLock { $0.queue.count - $0.head + $0.urgent.count + $0.busy + $0.held } }

    /// Stops taking new work; queued work still runs unless `discardQueued`
    /// (jobs that came back to finish always run). Threads exit when idle.
    public func shutdown(discardQueued: Bool = false) {
        state.withLock { s in
            s.stopping = true
            if discardQueued {
                s.queue.removeAll()
                s.head = 0
            }
        }
        for _ in 0..<size { available.signal() }
    }

    /// Waits until nothing is queued, running or held; false when `timeout` passed first.
    public func waitUntilIdle(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while pending > 0 {
            if Date() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }

    private func work() {
        let running = Running()
        pthread_setspecific(Self.runningKey, Unmanaged.passUnretained(running).toOpaque())
        while true {
            available.wait()
            let next = state.withLock { s -> (@Sendable () -> Void)? in
                if !s.urgent.isEmpty {
                    s.busy += 1
                    return s.urgent.removeFirst()
                }
                guard s.head < s.queue.count else { return nil }
                let w = s.queue[s.head]
                s.head += 1
                if s.head > 1024 && s.head * 2 > s.queue.count {
                    s.queue.removeFirst(s.head)
                    s.head = 0
                }
                s.busy += 1
                return w
            }
            guard let next else {
                if state.withLock({ $0.stopping }) { return }
                continue
            }
            running.handedOff = false
            next()
            state.withLock { s in
                if !running.handedOff { s.busy -= 1 }
            }
        }
    }
}
