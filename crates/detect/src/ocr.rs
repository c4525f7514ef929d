//! OCR: the [`Ocr`] trait and [`TesseractOcr`], which runs the `tesseract` CLI on a PNG piped
//! to its stdin and reads word boxes from its TSV output; [`group_lines`] joins words into
//! phrases.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{DetectError, Image};

/// One word read by OCR.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// The word.
    pub text: String,
    /// `[x0, y0, x1, y1]` in pixels of the image given to [`Ocr::words`].
    pub bounds: [i32; 4],
    /// The engine's confidence, 0–100.
    pub confidence: f32,
}

/// An OCR engine: the words of an image with their boxes.
pub trait Ocr: Send + Sync {
    /// The words of `image`, in a deterministic order.
    fn words(&self, image: Image<'_>) -> Result<Vec<Word>, DetectError>;
}

/// Runs the `tesseract` command-line program (Debian's `tesseract-ocr`).
#[derive(Debug, Clone)]
pub struct TesseractOcr {
    /// The program (default `tesseract`, found on `PATH`).
    pub binary: PathBuf,
    /// Language models (`-l`), default `eng`.
    pub language: String,
    /// Page segmentation mode (`--psm`), default 11 (sparse text: UI text is scattered).
    pub psm: u8,
    /// The run is killed after this long.
    pub timeout: Duration,
    /// TSV output beyond this many bytes is an error.
    pub max_output: usize,
    /// Words below this confidence (0–100) are dropped.
    pub min_confidence: f32,
}

impl Default for TesseractOcr {
    fn default() -> Self {
        TesseractOcr {
            binary: PathBuf::from("tesseract"),
            language: "eng".into(),
            psm: 11,
            timeout: Duration::from_secs(60),
            max_output: 16 << 20,
            min_confidence: 45.0,
        }
    }
}

impl TesseractOcr {
    /// The default settings.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A grayscale PNG of `image`, inverted when the picture is mostly dark (Tesseract reads dark
/// text on light ground best), with light greys lifted to white.
fn grayscale_png(image: Image<'_>) -> Result<Vec<u8>, DetectError> {
    let mut gray: Vec<u8> = image.rgba.chunks_exact(4).map(|p| luma(p[0], p[1], p[2])).collect();
    let mean = gray.iter().map(|&v| u64::from(v)).sum::<u64>() / gray.len().max(1) as u64;
    if mean < 110 {
        for v in &mut gray {
            *v = 255 - *v;
        }
    }
    // Levels: light greys (a dialog's scrim, tinted surfaces) go to near white, so Tesseract's
    // global threshold separates dark text from them as it does on white.
    for v in &mut gray {
        *v = (u32::from(*v) * 255 / 170).min(255) as u8;
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, image.width, image.height);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header().map_err(|e| DetectError::Ocr(format!("png: {e}")))?;
        writer.write_image_data(&gray).map_err(|e| DetectError::Ocr(format!("png: {e}")))?;
        writer.finish().map_err(|e| DetectError::Ocr(format!("png: {e}")))?;
    }
    Ok(out)
}

/// Rec. 601 luma of an RGB pixel.
pub(crate) fn luma(r: u8, g: u8, b: u8) -> u8 {
    ((299 * u32::from(r) + 587 * u32::from(g) + 114 * u32::from(b)) / 1000) as u8
}

impl Ocr for TesseractOcr {
    fn words(&self, image: Image<'_>) -> Result<Vec<Word>, DetectError> {
        image.check()?;
        let png = grayscale_png(image)?;
        let mut child = Command::new(&self.binary)
            .args(["stdin", "stdout", "-l", &self.language, "--psm", &self.psm.to_string(), "tsv"])
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    DetectError::OcrMissing(self.binary.display().to_string())
                } else {
                    DetectError::Ocr(format!("cannot start {}: {e}", self.binary.display()))
                }
            })?;
        let mut stdin = child.stdin.take();
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(&png);
            }
            drop(stdin);
        });
        let max = self.max_output;
        let stdout = child.stdout.take();
        let reader = std::thread::spawn(move || -> (Vec<u8>, bool) {
            let mut buf = Vec::new();
            let Some(out) = stdout else { return (buf, false) };
            let mut limited = out.take(max as u64 + 1);
            let _ = limited.read_to_end(&mut buf);
            let over = buf.len() > max;
            (buf, over)
        });
        let stderr = child.stderr.take();
        let err_reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut e) = stderr {
                let _ = (&mut e).take(64 << 10).read_to_end(&mut buf);
                // The rest is drained, not refused: a closed pipe would kill a chatty tesseract
                // with SIGPIPE and hide why it failed.
                let _ = std::io::copy(&mut e, &mut std::io::sink());
            }
            buf
        });
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(DetectError::Ocr(format!("tesseract timed out after {:?}", self.timeout)));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(DetectError::Ocr(format!("waiting for tesseract: {e}")));
                }
            }
        };
        let _ = writer.join();
        let (out, over) = reader.join().unwrap_or_default();
        let err = err_reader.join().unwrap_or_default();
        let status = status?;
        if over {
            return Err(DetectError::Ocr(format!("tesseract wrote more than {max} bytes")));
        }
        if !status.success() {
            let msg = String::from_utf8_lossy(&err);
            return Err(DetectError::Ocr(format!("tesseract failed ({status}): {}", msg.trim())));
        }
        Ok(parse_tsv(&String::from_utf8_lossy(&out), self.min_confidence))
    }
}

/// Words of Tesseract's TSV output (level 5 rows) at or above `min_confidence`, without empty
/// words (punctuation is kept for [`group_lines`], which drops phrases without a letter or
/// digit).
pub fn parse_tsv(tsv: &str, min_confidence: f32) -> Vec<Word> {
    let mut words = Vec::new();
    for line in tsv.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 12 || cols[0] != "5" {
            continue;
        }
        let num = |i: usize| cols[i].trim().parse::<i32>().ok();
        let (Some(left), Some(top), Some(width), Some(height)) = (num(6), num(7), num(8), num(9)) else {
            continue;
        };
        let confidence = cols[10].trim().parse::<f32>().unwrap_or(-1.0);
        let text = cols[11].trim();
        if text.is_empty() || confidence < min_confidence {
            continue;
        }
        words.push(Word {
            text: text.to_string(),
            bounds: [left, top, left.saturating_add(width), top.saturating_add(height)],
            confidence,
        });
    }
    words
}

/// Joins words into phrases: words whose vertical extents overlap by at least half the smaller
/// height and whose horizontal gap is at most `gap_factor` × the taller word's height are one
/// phrase. Phrases come in reading order (top to bottom, then left to right).
pub fn group_lines(words: &[Word], gap_factor: f32) -> Vec<Word> {
    let mut sorted: Vec<&Word> = words.iter().collect();
    sorted.sort_by_key(|w| (w.bounds[0], w.bounds[1], w.bounds[2], w.bounds[3]));
    let mut phrases: Vec<Word> = Vec::new();
    let mut conf_n: Vec<f32> = Vec::new();
    for w in sorted {
        let h = (w.bounds[3] - w.bounds[1]).max(1);
        let mut joined = false;
        for (p, n) in phrases.iter_mut().zip(conf_n.iter_mut()) {
            let ph = (p.bounds[3] - p.bounds[1]).max(1);
            let overlap = w.bounds[3].min(p.bounds[3]) - w.bounds[1].max(p.bounds[1]);
            let gap = w.bounds[0] - p.bounds[2];
            let limit = (gap_factor * h.max(ph) as f32) as i32;
            if overlap * 2 >= h.min(ph) && gap <= limit && gap >= -h && h * 2 >= ph && ph * 2 >= h {
                p.text.push(' ');
                p.text.push_str(&w.text);
                p.bounds = [
                    p.bounds[0].min(w.bounds[0]),
                    p.bounds[1].min(w.bounds[1]),
                    p.bounds[2].max(w.bounds[2]),
                    p.bounds[3].max(w.bounds[3]),
                ];
                p.confidence += w.confidence;
                *n += 1.0;
                joined = true;
                break;
            }
        }
        if !joined {
            phrases.push(w.clone());
            conf_n.push(1.0);
        }
    }
    for (p, n) in phrases.iter_mut().zip(conf_n) {
        p.confidence /= n;
    }
    // Lone punctuation is mostly an icon read as text (`<`, `>`); very short phrases need a
    // confident read.
    phrases.retain(|p| {
        let chars = p.text.chars().filter(|c| !c.is_whitespace()).count();
        p.text.chars().any(char::is_alphanumeric) && (chars > 2 || p.confidence >= 70.0)
    });
    phrases.sort_by_key(|p| (p.bounds[1], p.bounds[0], p.bounds[2], p.bounds[3]));
    phrases
}
