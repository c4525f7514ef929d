//! The classic detector on drawn screens, with a scripted OCR engine (the words of the drawing)
//! so the tests do not need Tesseract; one test runs the real `tesseract` when it is installed.

use phonebench_detect::eval::{iou, score, truth};
use phonebench_detect::{
    ClassicDetector, DetectError, Detector, Element, ElementKind, Image, Ocr, TesseractOcr, Word,
    element_list, to_tree,
};

const W: u32 = 1080;
const H: u32 = 2400;

/// An OCR engine that returns fixed words.
struct Scripted(Vec<Word>);

impl Ocr for Scripted {
    fn words(&self, _image: Image<'_>) -> Result<Vec<Word>, DetectError> {
        Ok(self.0.clone())
    }
}

fn word(text: &str, b: [i32; 4]) -> Word {
    Word { text: text.into(), bounds: b, confidence: 95.0 }
}

struct Canvas {
    rgba: Vec<u8>,
}

impl Canvas {
    fn new(bg: [u8; 3]) -> Canvas {
        let mut rgba = Vec::with_capacity((W * H * 4) as usize);
        for _ in 0..W * H {
            rgba.extend_from_slice(&[bg[0], bg[1], bg[2], 255]);
        }
        Canvas { rgba }
    }
    fn fill(&mut self, r: [i32; 4], c: [u8; 3]) {
        for y in r[1].max(0)..r[3].min(H as i32) {
            for x in r[0].max(0)..r[2].min(W as i32) {
                let i = ((y as u32 * W + x as u32) * 4) as usize;
                self.rgba[i..i + 3].copy_from_slice(&c);
            }
        }
    }
    /// Glyph-like strokes inside a word's box.
    fn text(&mut self, r: [i32; 4], c: [u8; 3]) {
        let mut x = r[0];
        while x + 6 <= r[2] {
            self.fill([x, r[1], x + 5, r[3]], c);
            x += 14;
        }
    }
    fn image(&self) -> Image<'_> {
        Image { width: W, height: H, rgba: &self.rgba }
    }
}

fn detector(words: Vec<Word>) -> ClassicDetector {
    ClassicDetector::with_ocr(Box::new(Scripted(words)))
}

#[test]
fn a_drawn_button_with_text_is_a_clickable_button() {
    let mut c = Canvas::new([255, 255, 255]);
    let button = [340, 1000, 740, 1126];
    c.fill(button, [103, 80, 164]);
    let text = [480, 1040, 600, 1086];
    c.text(text, [255, 255, 255]);
    let elements = detector(vec![word("Save", text)]).detect(c.image()).expect("detects");
    let found = elements
        .iter()
        .find(|e| e.kind == ElementKind::Button && e.text == "Save")
        .unwrap_or_else(|| panic!("no Save button in\n{}", element_list(&elements)));
    assert!(found.clickable);
    assert!(iou(&found.bounds, &button) > 0.9, "{:?} vs {button:?}", found.bounds);
    // The text is the button's, not a separate label.
    assert!(!elements.iter().any(|e| e.kind == ElementKind::Label && e.text == "Save"));
}

#[test]
fn an_outlined_field_with_left_text_is_a_text_field() {
    let mut c = Canvas::new([255, 255, 255]);
    let field = [42, 600, 1038, 747];
    c.fill(field, [120, 120, 120]);
    c.fill([45, 603, 1035, 744], [255, 255, 255]);
    let hint = [84, 650, 330, 700];
    c.text(hint, [90, 90, 90]);
    let elements = detector(vec![word("Search", [84, 650, 230, 700]), word("mail", [250, 650, 330, 700])])
        .detect(c.image())
        .expect("detects");
    let found = elements
        .iter()
        .find(|e| e.kind == ElementKind::TextField)
        .unwrap_or_else(|| panic!("no field in\n{}", element_list(&elements)));
    assert_eq!(found.text, "Search mail");
    assert!(found.clickable);
    assert!(iou(&found.bounds, &field) > 0.9);
}

/// A keyboard at the bottom: three rows of ten letter keys, then `?123`, space and enter.
fn keyboard() -> (Canvas, Vec<Word>, Vec<[i32; 4]>) {
    let mut c = Canvas::new([255, 255, 255]);
    c.fill([0, 1580, 1080, 2274], [232, 234, 237]);
    let mut words = Vec::new();
    let mut keys = Vec::new();
    let letters = ["qwertyuiop", "asdfghjkla", "zxcvbnmzxc"];
    for (row, line) in letters.iter().enumerate() {
        let y = 1610 + row as i32 * 168;
        for (i, ch) in line.chars().enumerate() {
            let x = 16 + i as i32 * 106;
            let key = [x, y, x + 90, y + 120];
            c.fill(key, [255, 255, 255]);
            let glyph = [x + 33, y + 40, x + 57, y + 80];
            c.text(glyph, [30, 30, 30]);
            words.push(word(&ch.to_string(), glyph));
            keys.push(key);
        }
    }
    let y = 1610 + 3 * 168;
    let special = [16, y, 216, y + 120];
    c.fill(special, [210, 220, 240]);
    c.text([60, y + 40, 170, y + 80], [30, 30, 30]);
    words.push(word("?123", [60, y + 40, 170, y + 80]));
    c.fill([336, y, 700, y + 120], [255, 255, 255]);
    c.fill([820, y, 1060, y + 120], [210, 220, 255]);
    // A list row above the keyboard.
    c.text([189, 800, 500, 850], [30, 30, 30]);
    words.push(word("Backend", [189, 800, 500, 850]));
    (c, words, keys)
}

#[test]
fn keyboard_keys_are_filtered_and_special_keys_kept() {
    let (c, words, keys) = keyboard();
    let elements = detector(words).detect(c.image()).expect("detects");
    let list = element_list(&elements);
    for key in &keys {
        assert!(
            !elements.iter().any(|e| iou(&e.bounds, key) > 0.3),
            "a letter key {key:?} is still listed:\n{list}"
        );
    }
    assert!(!elements.iter().any(|e| e.text.chars().count() == 1), "{list}");
    assert!(elements.iter().any(|e| e.text == "?123"), "the ?123 key is kept:\n{list}");
    assert!(elements.iter().any(|e| e.text == "Backend"), "{list}");
}

#[test]
fn without_filtering_the_keys_are_there() {
    let (c, words, keys) = keyboard();
    let options = phonebench_detect::ClassicOptions { filter_keyboard: false, ..Default::default() };
    let elements = detector(words).options(options).detect(c.image()).expect("detects");
    let found = keys.iter().filter(|k| elements.iter().any(|e| iou(&e.bounds, k) > 0.8)).count();
    assert!(found >= 25, "only {found} keys found");
}

#[test]
fn detection_is_deterministic_and_total() {
    let (c, words, _) = keyboard();
    let d = detector(words);
    let a = d.detect(c.image()).expect("detects");
    let b = d.detect(c.image()).expect("detects");
    assert_eq!(a, b);
    for (i, e) in a.iter().enumerate() {
        assert_eq!(e.id, i);
        assert!(e.bounds[0] < e.bounds[2] && e.bounds[1] < e.bounds[3]);
        assert!(e.bounds[0] >= 0 && e.bounds[1] >= 0 && e.bounds[2] <= W as i32 && e.bounds[3] <= H as i32);
    }
}

#[test]
fn odd_images_are_errors_or_empty_never_panics() {
    let d = detector(vec![word("x", [-5, -5, 99999, 3])]);
    assert!(d.detect(Image { width: 0, height: 0, rgba: &[] }).is_err());
    assert!(d.detect(Image { width: 10, height: 10, rgba: &[0; 12] }).is_err());
    // Noise, a one-pixel image, a stripe.
    let mut seed = 0x2545_f491_u32;
    let noise: Vec<u8> = (0..200 * 300 * 4)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as u8
        })
        .collect();
    d.detect(Image { width: 200, height: 300, rgba: &noise }).expect("noise");
    d.detect(Image { width: 1, height: 1, rgba: &[1, 2, 3, 4] }).expect("one pixel");
    d.detect(Image { width: 1, height: 300, rgba: &noise[..1200] }).expect("stripe");
}

#[test]
fn tree_and_list_forms() {
    let elements = vec![
        Element {
            id: 0,
            kind: ElementKind::Icon,
            text: String::new(),
            bounds: [0, 0, 10, 10],
            clickable: true,
        },
        Element {
            id: 1,
            kind: ElementKind::Label,
            text: "Say \"hi\"".into(),
            bounds: [0, 20, 50, 40],
            clickable: false,
        },
    ];
    assert_eq!(
        element_list(&elements),
        "[0] Icon [0, 0, 10, 10] clickable\n[1] Label \"Say \\\"hi\\\"\" [0, 20, 50, 40] not clickable\n"
    );
    let tree = to_tree(&elements, 100, 200);
    assert_eq!(tree.len(), 3);
    let t = truth(&tree, 100, 200);
    assert_eq!(t.len(), 2);
    let s = score(&elements, &t);
    assert_eq!(s.matched, 2);
    assert_eq!(s.clickable_recall(), 1.0);
    assert_eq!(s.text_accuracy(), 1.0);
}

#[test]
fn tesseract_runs_and_a_missing_binary_is_a_clear_error() {
    // A real glyph-free check: a blank screen gives no words; a missing binary is a clear error.
    let missing = TesseractOcr { binary: "/nonexistent/tesseract".into(), ..TesseractOcr::default() };
    let c = Canvas::new([255, 255, 255]);
    match missing.words(c.image()) {
        Err(DetectError::OcrMissing(msg)) => assert!(msg.contains("tesseract")),
        other => panic!("expected a missing-binary error, got {other:?}"),
    }
    // tools/test.sh installs tesseract: a machine without it fails here, never skips.
    let words = TesseractOcr::default().words(c.image()).expect("tesseract runs");
    assert!(words.is_empty(), "{words:?}");
}
