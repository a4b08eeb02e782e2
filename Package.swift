// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "hotfolder",
    products: [
        .executable(name: "hotfolder", targets: ["hotfolder"]),
        .library(name: "HotFolderKit", targets: ["HotFolderKit"]),
    ],
    targets: [
        // Debian 12 ships no pkg-config files for these two: the module maps link by name.
        .systemLibrary(name: "CInotifyTools", path: "Sources/CInotifyTools"),
        .systemLibrary(name: "CCUPS", path: "Sources/CCUPS"),
        .target(name: "CSystem", path: "Sources/CSystem"),
        // Every C++ exception from libqpdf is caught inside this shim; only error values cross into Swift.
        .target(
            name: "PDFShim",
            path: "Sources/PDFShim",
            cxxSettings: [.define("POINTERHOLDER_TRANSITION", to: "4"), .unsafeFlags(["-Wall", "-Wextra"])],
            linkerSettings: [.linkedLibrary("qpdf"), .linkedLibrary("stdc++")]
        ),
        // Rendering (poppler-cpp) and image encoding/decoding (libpng, libjpeg, libtiff):
        // pages to images, image files to PDF pages. Same rule: no exception leaves it.
        .target(
            name: "ImageShim",
            path: "Sources/ImageShim",
            cxxSettings: [.unsafeFlags(["-Wall", "-Wextra"])],
            linkerSettings: [.linkedLibrary("poppler-cpp"), .linkedLibrary("png16"), .linkedLibrary("jpeg"),
                             .linkedLibrary("tiff"), .linkedLibrary("z"), .linkedLibrary("stdc++")]
        ),
        // Text layout for annotation summaries: pango finds a font for every script.
        // The include paths are spelled out: pkg-config's cflags carry -pthread,
        // which SwiftPM refuses with a warning. Paths that do not exist are harmless.
        .target(
            name: "SummaryShim",
            path: "Sources/SummaryShim",
            cSettings: [.unsafeFlags(["-Wall", "-Wextra", "-I/usr/include/pango-1.0", "-I/usr/include/glib-2.0",
                                      "-I/usr/lib/x86_64-linux-gnu/glib-2.0/include", "-I/usr/lib/aarch64-linux-gnu/glib-2.0/include",
                                      "-I/usr/include/harfbuzz", "-I/usr/include/freetype2", "-I/usr/include/cairo"])],
            linkerSettings: [.linkedLibrary("pangocairo-1.0"), .linkedLibrary("pango-1.0"), .linkedLibrary("gobject-2.0"),
                             .linkedLibrary("glib-2.0"), .linkedLibrary("cairo")]
        ),
        .target(
            name: "HotFolderKit",
            dependencies: ["CInotifyTools", "CCUPS", "CSystem", "PDFShim", "ImageShim", "SummaryShim"],
            path: "Sources/HotFolderKit"
        ),
        .executableTarget(
            name: "hotfolder",
            dependencies: ["HotFolderKit"],
            path: "Sources/hotfolder"
        ),
        // The benchmark's floor: the service's libqpdf work in a tight loop (bench/).
        .executableTarget(
            name: "hotfolder-floor",
            dependencies: ["HotFolderKit", "CSystem"],
            path: "Sources/hotfolder-floor"
        ),
        .testTarget(
            name: "HotFolderKitTests",
            dependencies: ["HotFolderKit"],
            path: "Tests/HotFolderKitTests"
        ),
        // libFuzzer targets: scripts/fuzz builds them with -sanitize=fuzzer; a
        // plain build makes each a regression runner for the inputs named on
        // its command line (e.g. ConfigurationFuzz fuzz/corpus/configuration).
        .target(name: "FuzzSupport", path: "fuzz/Sources/FuzzSupport"),
        .executableTarget(name: "ConfigurationFuzz", dependencies: ["FuzzSupport", "HotFolderKit"], path: "fuzz/Sources/ConfigurationFuzz"),
        .executableTarget(name: "PageRangeFuzz", dependencies: ["FuzzSupport", "HotFolderKit"], path: "fuzz/Sources/PageRangeFuzz"),
        .executableTarget(name: "TicketFuzz", dependencies: ["FuzzSupport", "HotFolderKit"], path: "fuzz/Sources/TicketFuzz"),
        .executableTarget(name: "PDFOpenFuzz", dependencies: ["FuzzSupport", "HotFolderKit"], path: "fuzz/Sources/PDFOpenFuzz"),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
