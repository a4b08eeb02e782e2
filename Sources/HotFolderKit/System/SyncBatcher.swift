import CSystem
import Foundation
import Glibc

/// What must be done before a sync covers it: a journal writes the records
/// it keeps in memory.
protocol SyncPreparation: AnyObject, Sendable {
    func prepareForSync() throws(SystemError)
}

/// Group commit: makes what callers wrote durable with one `syncfs` per file
/// system for all callers that arrive together, instead of one fsync per file
/// per document (measured: those syncs halved the service's throughput).
///
/// One thread of its own runs the syncs back to back while anyone needs one,
/// so a sync always covers everything that was asked for while the one
/// before it ran. Work given to `afterSync` runs on that thread once such a
/// sync has completed; its caller does not wait (a job's thread takes the
/// next document meanwhile).
public final class SyncBatcher: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var pending: [UInt64: FileDescriptor] = [:]
    /// Someone waits for the next sync (even if their folders' devices
    /// could not be told: then it syncs only what others asked for).
    private var wanted = false
    private var preparations: [ObjectIdentifier: any SyncPreparation] = [:]
    private var started: UInt64 = 0
    private var deferred: [(ticket: UInt64, work: @Sendable (SystemError?) -> Void)] = []
    /// Deferred work handed out and still running.
    private var running = 0
    private var thread: Thread?
    /// While others still work (they will ask for a sync in a moment), a sync
    /// waits up to this long for them, so that one sync serves a burst's
    /// documents rather than two or three: measured on a 2,000-document burst,
    /// 10 ms took 1,249 syncs down to 63 and throughput up by a quarter. A
    /// lone document never waits: nobody else works then.
    private let gatherWindow: Double
    private let othersWorking: @Sendable () -> Bool
    /// A sync for this many waiting callers goes at once.
    private static let fullBatch = 256

    /// - Parameter othersWorking: whether work that will soon ask for a sync
    ///   is under way (asked with the batcher's lock held: it must not call back).
    public init(gatherWindow: Double = 0.010, othersWorking: @escaping @Sendable () -> Bool = { false }) {
        self.gatherWindow = gatherWindow
        self.othersWorking = othersWorking
    }

    /// Runs `work` once everything written so far on the file systems of
    /// `folders` (and what `preparing` holds back) is durable, with the sync's
    /// failure if it failed. Returns at once: the work runs on the batcher's
    /// thread, right after the sync, with the next sync waiting for it (so it
    /// must be short).
    func afterSync(_ folders: [Directory], preparing: [any SyncPreparation] = [], _ work: @escaping @Sendable (SystemError?) -> Void) {
        let devices = Self.devices(folders)
        condition.lock()
        for p in preparing { preparations[ObjectIdentifier(p)] = p }
        let ticket = request(devices)
        deferred.append((ticket, work))
        condition.unlock()
    }

    /// Syncs started so far.
    var syncsStarted: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    /// Whether no work given to `afterSync` is waiting or running.
    public var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return deferred.isEmpty && running == 0
    }

    private static func devices(_ folders: [Directory]) -> [(UInt64, FileDescriptor)] {
        folders.compactMap { folder in (try? folder.device()).map { ($0, folder.descriptor) } }
    }

    /// Asks for a sync of `devices`; returns the ticket (the sync that covers
    /// them). Called with the lock held.
    private func request(_ devices: [(UInt64, FileDescriptor)]) -> UInt64 {
        for (device, d) in devices { pending[device] = d }
        // The sync thread gathering more requests looks again by itself
        // within moments: woken only when it sleeps or the batch is full.
        let wake = !wanted || deferred.count + 1 >= Self.fullBatch
        wanted = true
        if thread == nil {
            // Weak: a service that is gone ends its batcher's thread.
            let t = Thread { [weak self] in
                while let self { self.syncOnce() }
            }
            t.name = "sync"
            thread = t
            t.start()
        }
        if wake { condition.broadcast() }
        return started + 1
    }

    /// Waits for a request (up to a few seconds, so that the thread of a
    /// batcher that is gone ends), runs one sync, then the work it made due.
    private func syncOnce() {
        condition.lock()
        if !wanted {
            _ = condition.wait(until: Date().addingTimeInterval(5))
            if !wanted {
                condition.unlock()
                return
            }
        }
        if gatherWindow > 0 {
            let deadline = Date().addingTimeInterval(gatherWindow)
            // Polled in short steps: the others do not tell when they stop.
            while deferred.count < Self.fullBatch, othersWorking(), Date() < deadline {
                _ = condition.wait(until: min(deadline, Date().addingTimeInterval(0.0005)))
            }
        }
        let batch = pending
        let prepare = preparations.values
        wanted = false
        pending.removeAll()
        preparations.removeAll()
        started += 1
        let generation = started
        condition.unlock()
        var failure: SystemError?
        for p in prepare {
            do { try p.prepareForSync() } catch { failure = error }
        }
        for d in batch.values where hf_syncfs(d.rawValue) != 0 {
            failure = SystemError("syncfs", path: d.path)
        }
        condition.lock()
        let due = deferred.filter { $0.ticket <= generation }.map { ($0.work, failure) }
        deferred.removeAll { $0.ticket <= generation }
        running += due.count
        condition.broadcast()
        condition.unlock()
        for (work, failure) in due { work(failure) }
        condition.lock()
        running -= due.count
        condition.broadcast()
        condition.unlock()
    }
}
