import CSystem
import Foundation
import Glibc

/// Group commit: makes what callers wrote durable with one `syncfs` per file
/// system for all callers that arrive together, instead of one fsync per file
/// per document (measured: those syncs halved the service's throughput).
/// A caller returns once a sync that started after its call has completed.
public final class SyncBatcher: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var pending: [UInt64: FileDescriptor] = [:]
    private var started: UInt64 = 0
    private var completed: UInt64 = 0
    private var running = false
    private var failures: [UInt64: SystemError] = [:]

    public init() {}

    /// Makes everything written so far on the file systems of `folders` durable.
    public func sync(_ folders: [Directory]) throws(SystemError) {
        var devices: [(UInt64, FileDescriptor)] = []
        for folder in folders {
            guard let device = try? folder.device() else { continue }
            devices.append((device, folder.descriptor))
        }
        condition.lock()
        for (device, d) in devices { pending[device] = d }
        let ticket = started + 1
        if running {
            while completed < ticket { condition.wait() }
            let failure = failures[ticket]
            condition.unlock()
            if let failure { throw failure }
            return
        }
        running = true
        condition.unlock()
        lead()
        condition.lock()
        let failure = failures[ticket]
        condition.unlock()
        if let failure { throw failure }
    }

    /// Runs syncs until nobody waits for one.
    private func lead() {
        while true {
            condition.lock()
            let batch = pending
            pending.removeAll()
            started += 1
            let generation = started
            condition.unlock()
            var failure: SystemError?
            for d in batch.values where hf_syncfs(d.rawValue) != 0 {
                failure = SystemError("syncfs", path: d.path)
            }
            condition.lock()
            if let failure { failures[generation] = failure }
            failures = failures.filter { $0.key + 64 > generation }
            completed = generation
            condition.broadcast()
            if pending.isEmpty {
                running = false
                condition.unlock()
                return
            }
            condition.unlock()
        }
    }
}
