#!/usr/bin/env python3
"""Writes apps/settings/content/settings_index.jsonl, the Settings app's search index.

One document per screen, switch and preference the app shows, like Android's SettingsIntelligence
index: `title` and `summary` as on screen, `keywords` with the words people search for, `screen`
(the app screen `go_<screen>` opens), `breadcrumb` (the path shown under a result) and, for screens
that need them, `args`. App info pages get one document per app in seed.sql.

Run from the repository root:  python3 tools/gen_settings_content.py
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "apps" / "settings"
OUT = APP / "content" / "settings_index.jsonl"

NET = "Network & internet"
CONN = "Connected devices"
SEC = "Security & privacy"

# (id, title, summary, keywords, screen, breadcrumb[, args])
ENTRIES = [
    # Network & internet
    ("network", "Network & internet", "Mobile, Wi-Fi, hotspot", "network internet connection data", "network", "Settings"),
    ("internet", "Internet", "Networks available", "wifi wi-fi wlan internet network connection", "internet", NET),
    ("wifi", "Wi-Fi", "Turn Wi-Fi on or off", "wifi wi-fi wlan wireless toggle switch", "internet", f"{NET} > Internet"),
    ("add_network", "Add network", "Add a Wi-Fi network by name", "wifi ssid hidden network join new", "wifi_add", f"{NET} > Internet"),
    ("saved_networks", "Saved networks", "Networks this phone remembers", "wifi forget remembered known networks", "saved_networks", f"{NET} > Internet"),
    ("wifi_prefs", "Network preferences", "Wi-Fi turns back on automatically", "wifi preferences", "wifi_prefs", f"{NET} > Internet"),
    ("wifi_auto_on", "Turn on Wi-Fi automatically", "Wi-Fi will turn back on near high-quality saved networks", "wifi automatic wakeup", "wifi_prefs", f"{NET} > Internet > Network preferences"),
    ("wifi_notify_public", "Notify for public networks", "Notify when a high-quality public network is available", "wifi open network notification", "wifi_prefs", f"{NET} > Internet > Network preferences"),
    ("airplane_mode", "Airplane mode", "Turn off all wireless connections", "airplane flight mode offline radio plane", "network", NET),
    ("sims", "SIMs", "Mobile network", "sim mobile cellular carrier operator", "mobile_network", NET),
    ("mobile_data", "Mobile data", "Access data using mobile network", "mobile cellular data 4g 5g lte", "mobile_network", f"{NET} > SIMs"),
    ("roaming", "Roaming", "Connect to data services when roaming", "roaming abroad travel data", "mobile_network", f"{NET} > SIMs"),
    ("data_warning", "Data warning & limit", "Data warning", "data usage warning limit billing", "mobile_network", f"{NET} > SIMs"),
    ("preferred_network_type", "Preferred network type", "5G, LTE, 3G, 2G", "5g lte 4g 3g 2g network mode", "mobile_network", f"{NET} > SIMs"),
    ("wifi_calling", "Wi-Fi calling", "Make calls over Wi-Fi when available", "wifi calling voip calls", "mobile_network", f"{NET} > SIMs"),
    ("hotspot", "Hotspot & tethering", "Wi-Fi hotspot, USB tethering", "hotspot tethering share internet portable", "hotspot", NET),
    ("wifi_hotspot", "Wi-Fi hotspot", "Use Wi-Fi hotspot", "hotspot access point share toggle", "hotspot", f"{NET} > Hotspot & tethering"),
    ("hotspot_password", "Hotspot password", "Password other devices use to join", "hotspot password key", "hotspot", f"{NET} > Hotspot & tethering"),
    ("data_saver", "Data Saver", "Reduce mobile data usage", "data saver restrict background", "network", NET),
    ("private_dns", "Private DNS", "Automatic", "dns private secure", "network", NET),
    # Connected devices
    ("connected_devices", "Connected devices", "Bluetooth, pairing", "devices bluetooth connected paired", "connected_devices", "Settings"),
    ("bluetooth", "Bluetooth", "Use Bluetooth", "bluetooth bt toggle switch wireless", "bluetooth", f"{CONN} > Connection preferences"),
    ("pair_new_device", "Pair new device", "Pair headphones, speakers and more", "bluetooth pair pairing new device headphones", "pair_device", CONN),
    ("previously_connected", "Previously connected devices", "Paired Bluetooth devices", "bluetooth paired saved devices forget", "bt_saved", CONN),
    ("connection_prefs", "Connection preferences", "Cast, printing, Nearby Share, Android Auto", "connection preferences cast printing", "connection_prefs", CONN),
    ("nfc", "NFC", "Use NFC", "nfc contactless tap pay", "connected_devices", CONN),
    ("device_name", "Device name", "The name other devices see", "device name rename phone bluetooth", "device_name", "About phone"),
    # Apps
    ("apps", "Apps", "Recent apps, default apps", "apps applications", "apps", "Settings"),
    ("all_apps", "See all apps", "App info, storage, permissions", "apps list installed uninstall", "apps_all", "Apps"),
    ("default_apps", "Default apps", "Browser, phone, SMS", "default apps browser sms messaging phone", "default_apps", "Apps"),
    ("default_sms", "SMS app", "Messages", "default sms text messaging app", "default_apps", "Apps > Default apps"),
    # Notifications
    ("notifications", "Notifications", "Notification history, conversations", "notifications alerts", "notifications", "Settings"),
    ("app_notifications", "App notifications", "Control notifications from apps", "app notifications block turn off", "app_notifications", "Notifications"),
    ("notification_history", "Notification history", "Show recent and snoozed notifications", "notification history dismissed", "notification_history", "Notifications"),
    ("bubbles", "Bubbles", "Show conversations as floating icons", "bubbles chat heads", "notifications", "Notifications"),
    ("lock_screen_notifications", "Notifications on lock screen", "Show conversations, default, and silent", "lock screen notifications privacy", "notifications", "Notifications"),
    ("hide_silent", "Hide silent notifications in status bar", "", "silent notifications status bar", "notifications", "Notifications"),
    ("snoozing", "Allow notification snoozing", "", "snooze notifications", "notifications", "Notifications"),
    ("notification_dot", "Notification dot on app icon", "", "badge dot icon", "notifications", "Notifications"),
    ("enhanced_notifications", "Enhanced notifications", "Get suggested actions, replies, and more", "smart replies suggestions", "notifications", "Notifications"),
    # Battery
    ("battery", "Battery", "Battery level and usage", "battery power charge", "battery", "Settings"),
    ("battery_saver", "Battery Saver", "Use Battery Saver", "battery saver power saving low power mode", "battery_saver", "Battery"),
    ("battery_saver_schedule", "Set a schedule", "Turn on Battery Saver automatically", "battery saver schedule", "battery_saver", "Battery > Battery Saver"),
    ("battery_usage", "Battery usage", "Usage since last full charge", "battery usage apps drain", "battery_usage", "Battery"),
    ("battery_percentage", "Battery percentage", "Show battery percentage in status bar", "battery percent status bar", "battery", "Battery"),
    ("adaptive_battery", "Adaptive Battery", "Extend battery life based on your phone usage", "adaptive battery", "adaptive_battery", "Battery > Adaptive preferences"),
    ("adaptive_charging", "Adaptive Charging", "Delay charging to 100%", "adaptive charging overnight", "adaptive_battery", "Battery > Adaptive preferences"),
    # Storage
    ("storage", "Storage", "Used and free space", "storage space memory disk free", "storage", "Settings"),
    ("trash", "Trash", "Files in trash", "trash deleted files empty", "storage", "Storage"),
    # Sound & vibration
    ("sound", "Sound & vibration", "Volume, haptics, Do Not Disturb", "sound audio volume", "sound", "Settings"),
    ("media_volume", "Media volume", "", "media volume music video sound loud", "sound", "Sound & vibration"),
    ("call_volume", "Call volume", "", "call volume voice", "sound", "Sound & vibration"),
    ("ring_volume", "Ring volume", "", "ring ringer volume silent vibrate", "sound", "Sound & vibration"),
    ("notification_volume", "Notification volume", "", "notification volume", "sound", "Sound & vibration"),
    ("alarm_volume", "Alarm volume", "", "alarm volume", "sound", "Sound & vibration"),
    ("dnd", "Do Not Disturb", "Only get notified by important people and apps", "do not disturb dnd silence quiet", "dnd", "Sound & vibration"),
    ("dnd_schedules", "Schedules", "Turn on Do Not Disturb automatically", "do not disturb schedule sleeping event", "dnd_schedules", "Sound & vibration > Do Not Disturb"),
    ("ringtone", "Phone ringtone", "The Big Adventure", "ringtone ring sound call tone", "ringtone", "Sound & vibration", {"kind": "ringtone"}),
    ("notification_sound", "Default notification sound", "", "notification sound tone", "ringtone", "Sound & vibration", {"kind": "notification_sound"}),
    ("alarm_sound", "Default alarm sound", "", "alarm sound tone", "ringtone", "Sound & vibration", {"kind": "alarm_sound"}),
    ("vibration", "Vibration & haptics", "", "vibration vibrate haptics haptic feedback", "sound", "Sound & vibration"),
    ("live_caption", "Live Caption", "Automatically caption media", "live caption subtitles", "sound", "Sound & vibration"),
    ("dial_pad_tones", "Dial pad tones", "", "dial pad keypad tones", "sound", "Sound & vibration"),
    ("touch_sounds", "Touch sounds", "", "touch sounds click", "sound", "Sound & vibration"),
    ("charging_sounds", "Charging sounds and vibration", "", "charging sound", "sound", "Sound & vibration"),
    ("screen_locking_sound", "Screen locking sound", "", "lock sound", "sound", "Sound & vibration"),
    # Display
    ("display", "Display", "Dark theme, font size, brightness", "display screen", "display", "Settings"),
    ("brightness", "Brightness level", "", "brightness bright dim screen light", "display", "Display"),
    ("adaptive_brightness", "Adaptive brightness", "Automatically adjust the screen brightness", "adaptive auto brightness", "display", "Display"),
    ("screen_timeout", "Screen timeout", "After 30 seconds of inactivity", "screen timeout sleep lock time", "display", "Display"),
    ("dark_theme", "Dark theme", "Use dark theme", "dark mode theme night black", "display", "Display"),
    ("display_size_text", "Display size and text", "Font size, bold text", "display size text zoom", "display_size_text", "Display"),
    ("font_size", "Font size", "Make text bigger or smaller", "font size text larger smaller", "display_size_text", "Display > Display size and text"),
    ("bold_text", "Bold text", "", "bold text font", "display_size_text", "Display > Display size and text"),
    ("high_contrast_text", "High contrast text", "", "contrast text", "display_size_text", "Display > Display size and text"),
    ("night_light", "Night Light", "Tint your screen amber", "night light blue light filter amber", "night_light", "Display"),
    ("screen_colors", "Colors", "Natural, boosted, adaptive", "colors saturation vivid", "display", "Display"),
    ("auto_rotate", "Auto-rotate screen", "", "auto rotate rotation landscape portrait orientation", "display", "Display"),
    ("smooth_display", "Smooth Display", "Refresh rate up to 120 Hz", "refresh rate 120hz smooth", "display", "Display"),
    # Wallpaper & style
    ("wallpaper", "Wallpaper & style", "Colors, themed icons, app grid", "wallpaper background style theme colors", "wallpaper", "Settings"),
    ("themed_icons", "Themed icons", "Match app icons to your wallpaper colors", "themed icons", "wallpaper", "Wallpaper & style"),
    ("app_grid", "App grid", "5×5", "app grid home screen layout", "wallpaper", "Wallpaper & style"),
    # Accessibility
    ("accessibility", "Accessibility", "Display, interaction, audio", "accessibility a11y", "accessibility", "Settings"),
    ("talkback", "TalkBack", "Speak items on screen", "talkback screen reader blind spoken feedback", "talkback", "Accessibility"),
    ("select_to_speak", "Select to Speak", "Tap items to hear them read aloud", "select to speak read aloud", "accessibility", "Accessibility"),
    ("color_motion", "Color and motion", "Color correction, color inversion, remove animations", "color motion", "color_motion", "Accessibility"),
    ("color_inversion", "Color inversion", "Turn light screens dark", "invert colors inversion", "color_motion", "Accessibility > Color and motion"),
    ("color_correction", "Color correction", "Adjust how colors display", "color blind correction daltonizer", "color_motion", "Accessibility > Color and motion"),
    ("remove_animations", "Remove animations", "Reduce movement on the screen", "animations motion", "color_motion", "Accessibility > Color and motion"),
    ("extra_dim", "Extra dim", "Dim screen beyond minimum brightness", "extra dim dark", "accessibility", "Accessibility"),
    ("magnification", "Magnification", "Zoom in on the screen", "magnification zoom magnify", "accessibility", "Accessibility"),
    ("accessibility_menu", "Accessibility Menu", "Control device via large menu", "accessibility menu", "accessibility", "Accessibility"),
    ("time_to_take_action", "Time to take action (Accessibility timeout)", "", "timeout accessibility", "accessibility", "Accessibility"),
    # Security & privacy
    ("security", "Security & privacy", "App security, device lock, permissions", "security privacy", "security", "Settings"),
    ("app_security", "App security", "Google Play Protect", "play protect scan harmful apps", "app_security", SEC),
    ("device_unlock", "Device unlock", "Screen lock", "unlock lock screen", "device_unlock", SEC),
    ("screen_lock", "Screen lock", "PIN, password, swipe", "screen lock pin password pattern swipe", "device_unlock", f"{SEC} > Device unlock"),
    ("find_my_device", "Find My Device", "Locate this device remotely", "find my device lost", "find_my_device", SEC),
    ("permission_manager", "Permission manager", "Control app access to your data", "permissions manager camera location microphone", "permission_manager", SEC),
    ("privacy_controls", "Privacy controls", "Camera, microphone, clipboard", "privacy controls", "privacy_controls", SEC),
    ("camera_access", "Camera access", "For apps and services with permission", "camera access", "privacy_controls", f"{SEC} > Privacy controls"),
    ("microphone_access", "Microphone access", "For apps and services with permission", "microphone mic access", "privacy_controls", f"{SEC} > Privacy controls"),
    ("clipboard_access", "Show clipboard access", "", "clipboard access", "privacy_controls", f"{SEC} > Privacy controls"),
    ("show_passwords", "Show passwords", "Display characters briefly as you type", "show passwords", "privacy_controls", f"{SEC} > Privacy controls"),
    ("app_pinning", "App pinning", "Keep the current app in view", "app pinning pin screen", "more_security", f"{SEC} > More security & privacy"),
    # Location
    ("location", "Location", "Use location", "location gps", "location", "Settings"),
    ("location_permissions", "App location permissions", "Apps with access to location", "location permission apps", "permission_apps", "Location", {"permission": "location"}),
    ("location_services", "Location services", "Wi-Fi scanning, Bluetooth scanning", "location services", "location_services", "Location"),
    ("location_accuracy", "Google Location Accuracy", "Improve location accuracy", "location accuracy improve", "location_services", "Location > Location services"),
    ("wifi_scanning", "Wi-Fi scanning", "Let apps scan for Wi-Fi networks", "wifi scanning", "location_services", "Location > Location services"),
    ("bluetooth_scanning", "Bluetooth scanning", "Let apps scan for nearby devices", "bluetooth scanning", "location_services", "Location > Location services"),
    # Safety & emergency
    ("safety", "Safety & emergency", "Emergency SOS, medical info, alerts", "safety emergency", "safety", "Settings"),
    ("emergency_sos", "Emergency SOS", "Press the power button 5 times", "emergency sos", "safety", "Safety & emergency"),
    ("crisis_alerts", "Crisis alerts", "", "crisis alerts disaster", "safety", "Safety & emergency"),
    # Passwords & accounts
    ("accounts", "Passwords & accounts", "Saved passwords, autofill, synced accounts", "accounts passwords google", "accounts", "Settings"),
    ("auto_sync", "Automatically sync app data", "Let apps refresh data automatically", "sync account data", "accounts", "Passwords & accounts"),
    ("autofill", "Autofill service", "Google", "autofill", "accounts", "Passwords & accounts"),
    # System
    ("system", "System", "Languages, gestures, time, backup", "system", "system", "Settings"),
    ("languages", "System languages", "Languages", "language languages locale", "languages", "System"),
    ("add_language", "Add a language", "", "add language", "language_add", "System > Languages"),
    ("gestures", "Gestures", "", "gestures", "gestures", "System"),
    ("navigation_mode", "System navigation", "Gesture navigation", "navigation buttons gestures 3-button", "gestures", "System > Gestures"),
    ("quick_tap", "Quick Tap to start actions", "Double-tap the back of your phone", "quick tap", "gestures", "System > Gestures"),
    ("one_handed_mode", "One-handed mode", "", "one handed", "gestures", "System > Gestures"),
    ("date_time", "Date & time", "Time zone", "date time clock", "date_time", "System"),
    ("auto_time", "Set time automatically", "", "automatic time network", "date_time", "System > Date & time"),
    ("time_zone", "Time zone", "", "time zone timezone", "date_time", "System > Date & time"),
    ("time_24h", "Use 24-hour format", "13:00", "24 hour time format clock", "date_time", "System > Date & time"),
    ("backup", "Backup", "Backup by Google One", "backup restore google one", "backup", "System"),
    ("reset_options", "Reset options", "Reset Wi-Fi, mobile & Bluetooth, app preferences", "reset network restore defaults", "reset_options", "System"),
    ("system_update", "System update", "Updated to Android 14", "system update software update", "system_update", "System"),
    # About phone
    ("about", "About phone", "Pixel 8", "about phone device info", "about", "Settings"),
    ("phone_number", "Phone number", "", "my phone number", "about", "About phone"),
    ("model", "Model", "Pixel 8", "model hardware serial", "hardware_info", "About phone"),
    ("android_version", "Android version", "14", "android version os", "android_version", "About phone"),
    ("build_number", "Build number", "AP2A.240805.005", "build number", "about", "About phone"),
    ("ip_address", "IP address", "", "ip address", "about", "About phone"),
    ("mac_address", "Wi-Fi MAC address", "", "mac address", "about", "About phone"),
    ("imei", "IMEI", "", "imei", "about", "About phone"),
    ("sim_status", "SIM status", "", "sim status signal", "sim_status", "About phone"),
]


def app_entries():
    """One App info document per app in seed.sql (Android's search finds apps by name)."""
    seed = (APP / "seed.sql").read_text(encoding="utf-8")
    block = seed.split("INSERT INTO apps", 1)[1].split(";", 1)[0]
    for app_id, name in re.findall(r"^\s*\('([a-z_]+)',\s*'([^']+)'", block, re.M):
        yield {
            "id": f"app_{app_id}",
            "title": name,
            "summary": "App info",
            "keywords": f"app info {name.lower()} uninstall force stop storage permissions notifications",
            "screen": "app_info",
            "breadcrumb": "Apps > All apps",
            "args": {"app_id": app_id},
        }


def main():
    docs = []
    for e in ENTRIES:
        doc = {"id": e[0], "title": e[1], "summary": e[2], "keywords": e[3], "screen": e[4], "breadcrumb": e[5]}
        if len(e) > 6:
            doc["args"] = e[6]
        docs.append(doc)
    docs.extend(app_entries())
    ids = [d["id"] for d in docs]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        sys.exit(f"duplicate ids: {sorted(dupes)}")
    screens = {p.stem for p in (APP / "screens").glob("*.xml") if not p.stem.startswith("_")}
    missing = sorted({d["screen"] for d in docs} - screens)
    if missing:
        sys.exit(f"unknown screens: {missing}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    print(f"wrote {len(docs)} documents to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
