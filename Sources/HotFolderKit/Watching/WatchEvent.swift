/// What the watcher tells a folder's settler about one file.
public enum WatchEvent: Sendable, Equatable {
    /// Written and closed, or moved in: a candidate once it stays quiet.
    case written(directory: String, name: String)
    /// Still being written.
    case modified(directory: String, name: String)
    /// Created (IN_CREATE): a writer may follow, or it may be a link or FIFO
    /// that never gets written.
    case created(directory: String, name: String)
    /// Found by a scan (at start, in a new subfolder, after an overflow).
    case appeared(directory: String, name: String)
    case removed(directory: String, name: String)
    /// The drop folder itself went away (unmounted, deleted); events stop.
    case folderGone(path: String)
    /// Events may have been lost (queue overflow); a scan follows.
    case overflow
    /// inotify refused to watch a folder of the tree (its watch limit, no
    /// memory): events from it would never come. The folder was scanned.
    case cannotWatch(path: String, reason: String)
}

/// Receives the watcher's events for one drop folder. Called on the watcher's
/// thread: implementations hand the work to their own queue at once.
public protocol WatchSink: AnyObject, Sendable {
    func receive(_ event: WatchEvent)
    func problem(_ message: String)
}
