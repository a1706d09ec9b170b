"""Where browsers keep their history, and how their folders are named: the places the browser
connector looks in (``discover``), the profile folders it never walks, and the folder names
that tell which browser a history database belongs to."""

from __future__ import annotations

# Profile subfolders that hold thousands of cache files and never a history database.
PRUNE = {
    "Cache",
    "Code Cache",
    "GPUCache",
    "Service Worker",
    "IndexedDB",
    "File System",
    "Local Storage",
    "Session Storage",
    "Extensions",
    "blob_storage",
    "WebStorage",
    "ShaderCache",
    "GrShaderCache",
    "GraphiteDawnCache",
    "Crashpad",
    "cache2",
    "storage",
    "startupCache",
    "crashes",
    "minidumps",
    "datareporting",
    "thumbnails",
}
# Folder names that name the browser (lower-cased; "-beta", "-dev"... suffixes allowed), the
# one nearest to the file wins.
BROWSER_DIRS = {
    "google-chrome": "chrome", "chrome": "chrome", "com.google.chrome": "chrome",
    "chromium": "chromium", "org.chromium.chromium": "chromium", "brave-browser": "brave",
    "bravesoftware": "brave", "com.brave.browser": "brave", "microsoft-edge": "edge",
    "microsoft edge": "edge", "vivaldi": "vivaldi", "opera": "opera",
    "com.operasoftware.opera": "opera", "firefox": "firefox", ".mozilla": "firefox",
    "org.mozilla.firefox": "firefox", "librewolf": "librewolf", ".librewolf": "librewolf",
    "waterfox": "waterfox", "safari": "safari", "safaritechnologypreview": "safari",
    "com.apple.safari": "safari",
}  # fmt: skip
FAMILY = {
    "chrome": "chromium",
    "chromium": "chromium",
    "brave": "chromium",
    "edge": "chromium",
    "vivaldi": "chromium",
    "opera": "chromium",
    "firefox": "firefox",
    "librewolf": "firefox",
    "waterfox": "firefox",
    "safari": "safari",
}
LABELS = {
    "chrome": "Chrome",
    "chromium": "Chromium",
    "brave": "Brave",
    "edge": "Edge",
    "vivaldi": "Vivaldi",
    "opera": "Opera",
    "firefox": "Firefox",
    "librewolf": "LibreWolf",
    "waterfox": "Waterfox",
    "safari": "Safari",
}
CHROMIUM_ROOTS = (
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware/Brave-Browser",
    ".config/microsoft-edge",
    ".config/vivaldi",
    "snap/chromium/common/chromium",
    ".var/app/com.google.Chrome/config/google-chrome",
    ".var/app/org.chromium.Chromium/config/chromium",
    ".var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Chromium",
    "Library/Application Support/BraveSoftware/Brave-Browser",
    "Library/Application Support/Microsoft Edge",
    "Library/Application Support/Vivaldi",
)
FIREFOX_ROOTS = (
    ".mozilla/firefox",
    "snap/firefox/common/.mozilla/firefox",
    ".var/app/org.mozilla.firefox/.mozilla/firefox",
    "Library/Application Support/Firefox/Profiles",
)
# Safari's own places: the history is one file per user, not per profile.
SAFARI_FILES = ("Library/Safari/History.db", "Library/SafariTechnologyPreview/History.db")
