//! The Email app with the apps around it: a photo taken in Camera is attached through Gallery's
//! picker and sent; mail arrives while the agent waits and its notification opens the thread; a
//! file shared from Files starts a mail with it attached; an attachment saved from a mail lands
//! in Files' Download folder.

use std::path::Path;

use phonebench_actions::{Action, Key, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_uitree::Node;

fn phone() -> Phone {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let packages: Vec<AppPackage> = ["camera", "contacts", "email", "files", "gallery", "messages", "notes"]
        .iter()
        .map(|id| AppPackage::load(&apps.join(id)).expect("the app loads"))
        .collect();
    Phone::new(Catalog::new(packages).expect("catalog"), PhoneConfig::default()).expect("phone")
}

/// The first node (topmost window first, then depth-first) whose text, description or resource
/// id (`:id/KEY`) is `key`.
fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn tap(phone: &mut Phone, key: &str) {
    let node = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap");
}

fn type_into(phone: &mut Phone, key: &str, text: &str) {
    let node = find(phone, key).unwrap_or_else(|| panic!("no field `{key}`"));
    let (x, y) = node.bounds.center();
    let target = Some(Target::Point(Point { x, y }));
    phone.apply(&Action::Type { text: text.into(), target, clear: true, enter: false }).expect("type");
}

fn rows(phone: &Phone, app: &str, sql: &str) -> Vec<serde_json::Value> {
    phone.query(app, sql).expect("query")
}

#[test]
fn a_photo_taken_in_camera_is_attached_from_gallery_and_sent() {
    let mut phone = phone();
    phone.apply(&Action::OpenApp { app: "camera".into() }).expect("open Camera");
    tap(&mut phone, "Shutter");
    let photo = &rows(
        &phone,
        "files",
        "SELECT id, name, image FROM files WHERE mime = 'image/jpeg' ORDER BY modified_at DESC, id DESC LIMIT 1",
    )[0];
    let name = photo["name"].as_str().expect("name").to_string();

    phone.apply(&Action::OpenApp { app: "email".into() }).expect("open Gmail");
    tap(&mut phone, "Compose");
    assert_eq!(phone.current_screen(), Some(("email", "compose")));
    // Typing a name offers the contact's address; tapping it fills the field.
    type_into(&mut phone, "to", "Naomi");
    tap(&mut phone, "suggestion");
    assert_eq!(find(&mut phone, "to").expect("to").text, "naomi.bakshi@adventureworks.example.com, ");
    type_into(&mut phone, "subject", "The new photo");
    tap(&mut phone, "Attach file");
    tap(&mut phone, "Insert photo");
    // Files and Gallery both pick images: a chooser asks which.
    assert!(find(&mut phone, "Complete action using").is_some());
    tap(&mut phone, "Gallery");
    tap(&mut phone, "Camera");
    tap(&mut phone, &name);
    assert_eq!(phone.current_screen(), Some(("email", "compose")), "back in the mail being written");
    assert_eq!(
        find(&mut phone, "subject").expect("subject").text,
        "The new photo",
        "fields survive the pick"
    );
    assert!(find(&mut phone, "attachment_tile").is_some_and(|n| n.content_desc == name));
    tap(&mut phone, "Send");
    assert_eq!(phone.current_screen(), Some(("email", "inbox")));

    let sent = rows(
        &phone,
        "email",
        "SELECT m.to_addrs, m.subject, a.name, a.image, a.file_id FROM mails m JOIN attachments a ON a.mail_id = m.id WHERE m.folder = 'sent' ORDER BY m.id DESC LIMIT 1",
    );
    assert_eq!(sent.len(), 1, "the sent mail carries the attachment");
    assert_eq!(sent[0]["to_addrs"], "naomi.bakshi@adventureworks.example.com");
    assert_eq!(sent[0]["subject"], "The new photo");
    assert_eq!(sent[0]["name"], photo["name"]);
    assert_eq!(sent[0]["image"], photo["image"]);
    assert_eq!(sent[0]["file_id"], photo["id"]);
    let event =
        phone.events().iter().rev().find(|e| e.name == "mail_sent").expect("a mail_sent event").clone();
    assert_eq!(event.data["subject"], "The new photo");
}

#[test]
fn an_invalid_address_keeps_the_mail_in_the_editor() {
    let mut phone = phone();
    phone.apply(&Action::OpenApp { app: "email".into() }).expect("open Gmail");
    tap(&mut phone, "Compose");
    type_into(&mut phone, "to", "naomi at example");
    tap(&mut phone, "Send");
    assert_eq!(phone.current_screen(), Some(("email", "compose")));
    assert!(find(&mut phone, "Invalid address").is_some(), "a toast says why");
    assert_eq!(
        rows(
            &phone,
            "email",
            "SELECT count(*) AS n FROM mails WHERE folder = 'sent' AND to_addrs = 'naomi at example'"
        )[0]["n"],
        0
    );
}

#[test]
fn mail_arrives_during_a_wait_and_its_notification_opens_the_thread() {
    let mut phone = phone();
    phone.apply(&Action::OpenApp { app: "email".into() }).expect("open Gmail");
    assert!(find(&mut phone, "Re: Project kickoff on Thursday").is_none(), "not arrived yet");
    phone.apply(&Action::Wait { ms: Some(5 * 60_000) }).expect("wait");
    let arrived = rows(
        &phone,
        "email",
        "SELECT arrives_at, read FROM mails WHERE subject = 'Re: Project kickoff on Thursday'",
    );
    assert!(arrived[0]["arrives_at"].is_null(), "delivered");
    assert!(find(&mut phone, "Gmail notification").is_some(), "an icon in the status bar");
    phone.apply(&Action::Key { key: Key::Other("NOTIFICATION".into()) }).expect("shade");
    tap(&mut phone, "Re: Project kickoff on Thursday");
    assert_eq!(phone.current_screen(), Some(("email", "thread")));
    assert!(find(&mut phone, "Room 2A").is_none());
    let body = {
        let tree = phone.tree().expect("renders");
        tree.iter()
            .filter(|(_, n)| n.resource_id.ends_with(":id/message_body"))
            .map(|(_, n)| n.text.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(body.len(), 2, "both mails of the conversation");
    assert!(body[1].contains("Room 2A"), "{body:?}");
    assert_eq!(
        rows(&phone, "email", "SELECT count(*) AS n FROM mails WHERE thread_id = 1 AND read = 0")[0]["n"],
        0,
        "opening reads it"
    );
}

#[test]
fn a_file_shared_from_files_starts_a_mail_and_an_attachment_saves_into_download() {
    let mut phone = phone();
    // Share a document from Files: the chooser lists Gmail; the editor opens with it attached.
    let doc = &rows(
        &phone,
        "files",
        "SELECT id, name FROM files WHERE mime = 'application/pdf' AND trashed_at IS NULL ORDER BY id LIMIT 1",
    )[0];
    let doc_id = doc["id"].as_i64().expect("id");
    let args = std::collections::BTreeMap::from([("file_id".to_string(), serde_json::json!(doc_id))]);
    phone.start_app("files", Some("viewer"), &args).expect("open the document in Files");
    tap(&mut phone, "Share");
    tap(&mut phone, "Gmail");
    assert_eq!(phone.current_screen(), Some(("email", "compose")));
    assert!(
        find(&mut phone, "attachment_tile")
            .is_some_and(|n| Some(n.content_desc.as_str()) == doc["name"].as_str())
    );
    // Back out (the draft is kept) and save an attachment of a received mail.
    tap(&mut phone, "Navigate up");
    phone.apply(&Action::OpenApp { app: "email".into() }).expect("open Gmail");
    tap(&mut phone, "Search in mail");
    phone
        .apply(&Action::Type { text: "quarterly".into(), target: None, clear: false, enter: true })
        .expect("search");
    tap(&mut phone, "Farah Okafor, Quarterly report draft");
    tap(&mut phone, "Save Q1_report_draft.pdf to Files");
    assert!(find(&mut phone, "Saved to Download").is_some());
    let saved = rows(
        &phone,
        "files",
        "SELECT p.path, f.mime FROM files f JOIN file_paths p ON p.id = f.id WHERE f.name = 'Q1_report_draft.pdf'",
    );
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0]["path"], "Download/Q1_report_draft.pdf");
    assert_eq!(saved[0]["mime"], "application/pdf");
    tap(&mut phone, "Save Q1_report_draft.pdf to Files");
    assert!(find(&mut phone, "Q1_report_draft.pdf is already in Download").is_some(), "not saved twice");
}

#[test]
fn a_note_shared_as_text_can_go_to_gmail_or_messages() {
    let mut phone = phone();
    let note =
        &rows(&phone, "notes", "SELECT id, name, body FROM notes WHERE body <> '' ORDER BY id LIMIT 1")[0];
    let args = std::collections::BTreeMap::from([("note_id".to_string(), note["id"].clone())]);
    phone.start_app("notes", Some("view"), &args).expect("open the note");
    tap(&mut phone, "Share");
    assert!(find(&mut phone, "Gmail").is_some() && find(&mut phone, "Copy").is_some());
    tap(&mut phone, "Messages");
    assert_eq!(phone.current_screen(), Some(("messages", "compose")));
    // Until a recipient is chosen the text waits as a preview, carried into the conversation.
    let draft = find(&mut phone, "attachment_preview").expect("the shared text");
    assert_eq!(Some(draft.text.as_str()), note["body"].as_str(), "the note is the draft");
    // Back returns to the note; sharing to Gmail makes a draft with the note's name as subject.
    phone.apply(&Action::Key { key: Key::Back }).expect("close the keyboard");
    phone.apply(&Action::Key { key: Key::Back }).expect("back");
    phone.apply(&Action::Key { key: Key::Back }).expect("back");
    assert_eq!(phone.current_screen(), Some(("notes", "view")));
    tap(&mut phone, "Share");
    tap(&mut phone, "Gmail");
    assert_eq!(find(&mut phone, "subject").expect("subject").text, note["name"].as_str().expect("name"));
    assert_eq!(Some(find(&mut phone, "body").expect("body").text.as_str()), note["body"].as_str());
}
