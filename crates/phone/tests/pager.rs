//! A horizontal pager (`ViewPager`): one page in the tree at a time, turned by a swipe or a
//! sideways scroll, kept per screen, its `on-change` told the new page.

use phonebench_actions::{Action, Direction, Point, Swipe, Target};
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_testkit::probe_package;

const SCREEN: &str = r#"<LinearLayout>
  <TextView id="title" text="Photo {{ (pages.photos or 0) + 1 }} of 3 (seen {{ vars.seen or 'none' }})"/>
  <ViewPager id="photos" height="300" on-change="seen">
    {% for name in ["beach", "dog", "city"] %}
    <FrameLayout id="page"><TextView id="caption" text="{{ name }}"/></FrameLayout>
    {% endfor %}
  </ViewPager>
</LinearLayout>"#;

const ACTIONS: &str = r#"
[seen]
steps = [ { set = { seen = "value" } } ]
"#;

fn texts(phone: &mut Phone, id: &str) -> Vec<String> {
    let tree = phone.tree().expect("renders");
    let suffix = format!(":id/{id}");
    tree.iter().filter(|(_, n)| n.resource_id.ends_with(&suffix)).map(|(_, n)| n.text.clone()).collect()
}

#[test]
fn swipes_and_sideways_scrolls_turn_pages_and_the_screen_knows_the_page() {
    let (root, dir) = probe_package(
        "pager",
        &[("schema.sql", ""), ("screens/main.xml", SCREEN), ("actions.toml", ACTIONS)],
    );
    let package = phonebench_apps::AppPackage::load(&dir).expect("loads");
    let catalog = Catalog::new(vec![package]).expect("catalog");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("phone");
    phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open");
    assert_eq!(texts(&mut phone, "caption"), ["beach"], "only the page shown is in the tree");
    let pager = {
        let tree = phone.tree().expect("renders");
        let (_, node) = tree.iter().find(|(_, n)| n.resource_id.ends_with(":id/photos")).expect("the pager");
        assert!(node.scrollable, "a pager with pages to turn is scrollable");
        assert_eq!(node.class, "androidx.viewpager2.widget.ViewPager2");
        node.bounds
    };
    let (x, y) = pager.center();
    // A finger moving left shows the next page.
    let swipe = |from: i32, to: i32| {
        Action::Swipe(Swipe::Between { from: Point { x: from, y }, to: Point { x: to, y } })
    };
    phone.apply(&swipe(x + 300, x - 300)).expect("swipe");
    assert_eq!(texts(&mut phone, "caption"), ["dog"]);
    assert_eq!(texts(&mut phone, "title"), ["Photo 2 of 3 (seen 1)"]);
    phone
        .apply(&Action::Scroll { direction: Direction::Right, target: Some(Target::Point(Point { x, y })) })
        .expect("scroll");
    assert_eq!(texts(&mut phone, "caption"), ["city"]);
    let outcome = phone.apply(&Action::Scroll { direction: Direction::Right, target: None }).expect("scroll");
    assert!(outcome.notes.iter().any(|n| n.contains("last page")), "{:?}", outcome.notes);
    phone.apply(&swipe(x - 300, x + 300)).expect("swipe back");
    assert_eq!(texts(&mut phone, "caption"), ["dog"]);
    assert_eq!(texts(&mut phone, "title"), ["Photo 2 of 3 (seen 1)"]);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_pager_without_an_id_is_a_layout_error() {
    let screen = r#"<LinearLayout><ViewPager><TextView text="a"/></ViewPager></LinearLayout>"#;
    let (root, dir) = probe_package("pager-noid", &[("schema.sql", ""), ("screens/main.xml", screen)]);
    let package = phonebench_apps::AppPackage::load(&dir).expect("loads");
    let mut phone =
        Phone::new(Catalog::new(vec![package]).expect("catalog"), PhoneConfig::default()).expect("phone");
    let outcome = phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open");
    let notes = outcome.notes.join("\n");
    assert!(notes.contains("ViewPager needs an `id`"), "{notes}");
    let _ = std::fs::remove_dir_all(root);
}

const FORM: &str = r#"<LinearLayout>
  <TextView id="title" text="second: {{ fields.second or 'unset' }}"/>
  <ViewPager id="form" height="300">
    <LinearLayout id="page"><EditText id="first" value="one"/></LinearLayout>
    <LinearLayout id="page"><EditText id="second" value="two" focus="true"/></LinearLayout>
  </ViewPager>
</LinearLayout>"#;

/// The frame's state goes into the views the template's markup parsed to (the page shown, the
/// fields' text): a field on a page not shown is not on the screen, so it neither takes the
/// autofocus nor gets its value into the screen's fields until its page is shown.
#[test]
fn fields_on_a_page_not_shown_are_not_on_the_screen_until_it_is() {
    let (root, dir) = probe_package("pager_form", &[("schema.sql", ""), ("screens/main.xml", FORM)]);
    let package = phonebench_apps::AppPackage::load(&dir).expect("loads");
    let catalog = Catalog::new(vec![package]).expect("catalog");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("phone");
    phone.apply(&Action::OpenApp { app: "probe".into() }).expect("open");
    assert_eq!(texts(&mut phone, "first"), ["one"]);
    assert!(texts(&mut phone, "second").is_empty(), "only the page shown is in the tree");
    assert!(!phone.keyboard_shown(), "the focused field is on a page not shown");
    let field = {
        let tree = phone.tree().expect("renders");
        let (_, node) = tree.iter().find(|(_, n)| n.resource_id.ends_with(":id/first")).expect("the field");
        node.bounds.center()
    };
    let (x, y) = field;
    let typing = Action::Type {
        text: "hello".into(),
        target: Some(Target::Point(Point { x, y })),
        clear: true,
        enter: false,
    };
    phone.apply(&typing).expect("type");
    assert_eq!(texts(&mut phone, "first"), ["hello"]);
    assert_eq!(
        texts(&mut phone, "title"),
        ["second: unset"],
        "the hidden page's field is not among the fields"
    );
    let swipe = |from: i32, to: i32| {
        Action::Swipe(Swipe::Between { from: Point { x: from, y }, to: Point { x: to, y } })
    };
    phone.apply(&swipe(x + 300, x - 300)).expect("swipe");
    assert_eq!(texts(&mut phone, "second"), ["two"], "the markup's value, once its page is shown");
    phone.apply(&swipe(x - 300, x + 300)).expect("swipe back");
    assert_eq!(texts(&mut phone, "first"), ["hello"], "typed text is kept across pages");
    assert_eq!(texts(&mut phone, "title"), ["second: two"]);
    let _ = std::fs::remove_dir_all(root);
}
