import Foundation
import Synchronization

/// A fixed set of long-lived threads that run jobs in the order they came.
/// Generation is CPU-bound; more threads than cores only adds contention.
public final class WorkerPool: Sendable {
    private struct State {
        var queue: [@Sendable () -> Void] = []
        var head = 0
        /// Run before `queue`: work that finishes what was started.
        var urgent: [@Sendable () -> Void] = []
        var stopping = false
        var busy = 0
    }

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

    /// Queues `work`; `urgent` work runs before everything queued (a job
    /// that continues after a sync goes before documents not yet claimed,
    /// so what is started gets finished).
    /// False when the pool is shutting down and did not take it.
    @discardableResult
    public func submit(urgent: Bool = false, _ work: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            if urgent { s.urgent.append(work) } else { s.queue.append(work) }
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// Jobs queued or running.
    public var pending: Int { state.withLock { $0.queue.count - $0.head + $0.urgent.count + $0.busy } }

    /// Stops taking new work; queued work still runs unless `discardQueued`.
    /// Threads exit when idle.
    public func shutdown(discardQueued: Bool = false) {
        state.withLock { s in
            s.stopping = true
            if discardQueued {
                s.queue.removeAll()
                s.urgent.removeAll()
                s.head = 0
            }
        }
        for _ in 0..<size { available.signal() }
    }

    /// Waits until nothing is queued or running; false when `timeout` passed first.
    public func waitUntilIdle(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while pending > 0 {
            if Date() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }

    private func work() {
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
            next()
            state.withLock { $0.busy -= 1 }
        }
    }
}
