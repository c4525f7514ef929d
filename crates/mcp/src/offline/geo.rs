//! `geo`: places, routes and travel times around Riverton, the phone owner's town. The places
//! are the Calendar events' locations and everyday destinations; the towns are the Contacts'
//! towns, so a contact's street address can be routed to as well (placed in its town by a hash
//! of the street, the same every time).

use serde_json::{Map, Value, json};

use super::{
    OfflineServer, ToolDef, ToolError, find_one, fnv, fold, object_schema, required, round, text, with_enum,
};

/// A town: name, region, centre (km east, km north of Riverton's centre).
struct Town {
    name: &'static str,
    region: &'static str,
    x: f64,
    y: f64,
}

const TOWNS: [Town; 9] = [
    Town { name: "Riverton", region: "Riverton area", x: 0.0, y: 0.0 },
    Town { name: "Cedar Falls", region: "Riverton area", x: 18.0, y: 9.0 },
    Town { name: "Lakeview", region: "Riverton area", x: -12.0, y: 14.0 },
    Town { name: "Brookside", region: "Riverton area", x: 6.0, y: -16.0 },
    Town { name: "Fairhaven", region: "Riverton area", x: -20.0, y: -8.0 },
    Town { name: "Millbrook", region: "Riverton area", x: 30.0, y: -4.0 },
    Town { name: "Zurich", region: "Zurich", x: 0.0, y: 0.0 },
    Town { name: "London", region: "London", x: 0.0, y: 0.0 },
    Town { name: "Lisbon", region: "Lisbon", x: 0.0, y: 0.0 },
];

/// A place: name, category, street address, town, position (km, relative to the town's
/// region origin), phone, opening hours.
struct Place {
    name: &'static str,
    category: &'static str,
    street: &'static str,
    town: &'static str,
    x: f64,
    y: f64,
    phone: &'static str,
    hours: &'static str,
}

macro_rules! place {
    ($name:literal, $cat:literal, $street:literal, $town:literal, $x:literal, $y:literal, $phone:literal, $hours:literal) => {
        Place {
            name: $name,
            category: $cat,
            street: $street,
            town: $town,
            x: $x,
            y: $y,
            phone: $phone,
            hours: $hours,
        }
    };
}

// One place per line: a table is easier to read and to diff than the formatter's layout.
#[rustfmt::skip]
const PLACES: &[Place] = &[
    place!("Home", "home", "18 Harbor Street", "Riverton", 0.0, 0.0, "", ""),
    place!("Northwind Office", "office", "200 Market Square", "Riverton", 2.4, 1.1, "+1 555-0140", "Mon-Fri 08:00-18:00"),
    place!("Cafe Lumen", "cafe", "7 Canal Walk", "Riverton", 1.2, 0.8, "+1 555-0182", "daily 07:00-19:00"),
    place!("Blue Door Bakery", "bakery", "41 Mill Lane", "Riverton", -0.3, 1.4, "+1 555-0113", "Tue-Sun 06:30-15:00"),
    place!("Pulse Fitness", "gym", "90 Ridge Road", "Riverton", -1.6, 2.3, "+1 555-0167", "daily 06:00-22:00"),
    place!("Riverbend Dental", "dentist", "220 Harbor View Drive", "Riverton", -2.9, -1.1, "(206) 555-0199", "Mon-Fri 08:30-17:00"),
    place!("Concert Hall", "concert venue", "1 Festival Plaza", "Riverton", 2.9, 1.6, "+1 555-0100", "box office 10:00-20:00"),
    place!("Roxy Cinema", "cinema", "55 Station Road", "Riverton", 0.4, 2.9, "+1 555-0155", "daily 12:00-23:30"),
    place!("City Pool", "swimming pool", "3 Park Avenue", "Riverton", -0.8, -2.6, "+1 555-0131", "daily 06:00-21:00"),
    place!("Studio Nine", "hair salon", "9 Bridge Street", "Riverton", 1.7, -0.4, "+1 555-0199", "Tue-Sat 09:00-18:00"),
    place!("Bayview Motors", "car service", "140 Harbour Road", "Riverton", 4.6, 5.8, "+1 555-0177", "Mon-Sat 07:30-17:30"),
    place!("Northwind Express depot", "parcel depot", "8 Freight Way", "Riverton", 7.8, -3.4, "+1 555-0148", "Mon-Sat 08:00-20:00"),
    place!("Riverton Central Station", "train station", "1 Station Square", "Riverton", 1.9, 0.2, "", "always open"),
    place!("Riverton Airport", "airport", "Airport Road", "Riverton", 11.5, -6.8, "+1 555-0190", "always open"),
    place!("St. Mary's Hospital", "hospital", "400 Elm Street", "Riverton", -3.5, 3.9, "+1 555-0111", "always open"),
    place!("Riverton Public Library", "library", "22 Civic Way", "Riverton", 1.1, 1.9, "+1 555-0136", "Mon-Sat 09:00-20:00"),
    place!("Harbor Market", "supermarket", "60 Harbor Street", "Riverton", 0.6, -0.7, "+1 555-0120", "daily 07:00-22:00"),
    place!("Oakwood Pharmacy", "pharmacy", "15 Oak Street", "Riverton", -1.0, 0.9, "+1 555-0126", "daily 08:00-21:00"),
    place!("Maple Street Pharmacy", "pharmacy", "14 Maple Street", "Riverton", 2.8, 2.6, "(503) 555-0148", "Mon-Sat 08:00-20:00"),
    place!("Sunrise Auto Repair", "car repair", "901 Quarry Lane", "Riverton", 6.1, -1.9, "(415) 555-0173", "Mon-Fri 08:00-18:00"),
    place!("Sunrise Pharmacy", "pharmacy", "230 Sunrise Boulevard", "Riverton", 3.3, -2.2, "+1 555-0129", "Mon-Sat 09:00-19:00"),
    place!("Trattoria Sole", "restaurant", "5 Piazza Lane", "Riverton", 1.5, 1.2, "+1 555-0171", "daily 12:00-23:00"),
    place!("Golden Wok", "restaurant", "77 Quay Street", "Riverton", -2.2, 0.4, "+1 555-0164", "daily 11:30-22:30"),
    place!("Greenleaf Grocery", "supermarket", "10 Falls Road", "Cedar Falls", 17.5, 8.4, "+1 555-0241", "daily 08:00-21:00"),
    place!("Coho Winery", "winery", "2 Vineyard Lane", "Cedar Falls", 21.4, 11.2, "+1 555-0233", "Thu-Sun 11:00-18:00"),
    place!("Cedar Falls Museum", "museum", "1 Museum Square", "Cedar Falls", 18.8, 9.9, "+1 555-0210", "Tue-Sun 10:00-17:00"),
    place!("Lake Pavilion", "event venue", "Shore Drive", "Lakeview", -11.5, 15.1, "+1 555-0318", "by booking"),
    place!("Lakeview Trailhead", "park", "Trail Road", "Lakeview", -13.2, 16.0, "", "always open"),
    place!("Alder Lane School", "school", "30 Alder Lane", "Brookside", 5.1, -14.2, "+1 555-0415", "Mon-Fri 08:00-16:00"),
    place!("Brookside Mall", "shopping centre", "100 Commerce Drive", "Brookside", 6.3, -15.5, "+1 555-0400", "daily 09:00-21:00"),
    place!("Fairhaven Beach", "beach", "Beach Road", "Fairhaven", -19.6, -9.4, "", "always open"),
    place!("Maple Court", "care home", "4 Maple Court", "Millbrook", 29.1, -3.2, "+1 555-0520", "visiting 10:00-19:00"),
    place!("Millbrook Garden Centre", "garden centre", "18 Nursery Road", "Millbrook", 30.4, -5.1, "+1 555-0534", "daily 09:00-18:00"),
    place!("Zurich Airport", "airport", "Flughafen", "Zurich", 0.0, 10.0, "+41 43 816 22 11", "always open"),
    place!("Zurich HB", "train station", "Bahnhofplatz", "Zurich", 0.0, 0.0, "", "always open"),
    place!("Casa do Rio", "hotel", "Rua do Rio 12", "Lisbon", 0.5, 0.3, "+351 21 000 0000", "reception always open"),
    place!("Lisbon Airport", "airport", "Alameda das Comunidades", "Lisbon", 3.0, 6.5, "", "always open"),
    place!("London Bridge Station", "train station", "Tooley Street", "London", 0.0, 0.0, "", "always open"),
    place!("Heathrow Airport", "airport", "Hounslow", "London", -22.0, -2.0, "", "always open"),
];

/// Travel modes: name, average speed in km/h over the road distance, fixed minutes (parking,
/// waiting for the bus).
const MODES: [(&str, f64, f64); 4] =
    [("drive", 40.0, 3.0), ("transit", 24.0, 8.0), ("bike", 15.0, 0.0), ("walk", 4.8, 0.0)];

/// Roads are not straight: road distance = straight-line distance × this.
const ROAD_FACTOR: f64 = 1.3;

/// A located point: a place or a geocoded street address.
struct Spot {
    label: String,
    address: String,
    region: &'static str,
    x: f64,
    y: f64,
}

fn town(name: &str) -> Option<&'static Town> {
    TOWNS.iter().find(|t| t.name == name)
}

fn address_of(p: &Place) -> String {
    format!("{}, {}", p.street, p.town)
}

fn spot_of(p: &Place) -> Spot {
    let region = town(p.town).map_or("Riverton area", |t| t.region);
    Spot { label: p.name.to_string(), address: address_of(p), region, x: p.x, y: p.y }
}

/// Where `wanted` is, tried in this order: a town by its name (its centre); a place by its name;
/// a place by its own street address (`2 Vineyard Lane, Cedar Falls`); a place by a unique part
/// of its name; a street address in a known town (`643 Oak Terrace, Cedar Falls, OR 97205`),
/// placed within 2.5 km of the town's centre by a hash of the street, the same every time. The
/// town of an address is read after its first comma.
fn locate(wanted: &str) -> Result<Spot, ToolError> {
    let folded = fold(wanted);
    if let Some(t) = TOWNS.iter().find(|t| fold(t.name) == folded) {
        return Ok(Spot { label: t.name.into(), address: t.name.into(), region: t.region, x: t.x, y: t.y });
    }
    if let Some(p) = PLACES.iter().find(|p| fold(p.name) == folded) {
        return Ok(spot_of(p));
    }
    let (street, locality) = match wanted.split_once(',') {
        Some((street, rest)) => (fold(street), fold(rest)),
        None => (folded.clone(), String::new()),
    };
    let at_address = PLACES
        .iter()
        .find(|p| fold(p.street) == street && (locality.is_empty() || locality.contains(&fold(p.town))));
    if let Some(p) = at_address {
        return Ok(spot_of(p));
    }
    if locality.is_empty() {
        match find_one(PLACES, |p| p.name, wanted, "place") {
            Ok(p) => return Ok(spot_of(p)),
            Err(e) if e.0.contains("several") => return Err(e),
            Err(_) => {}
        }
    }
    let Some(t) = TOWNS.iter().find(|t| !locality.is_empty() && locality.contains(&fold(t.name))) else {
        return Err(ToolError(format!(
            "no place or address \"{wanted}\" (search_places finds places; an address needs its town, e.g. \"12 Elm Street, Lakeview\")"
        )));
    };
    let h = fnv(&street);
    let dx = ((h & 0xffff) as f64 / 65535.0 - 0.5) * 5.0;
    let dy = (((h >> 16) & 0xffff) as f64 / 65535.0 - 0.5) * 5.0;
    Ok(Spot {
        label: wanted.trim().to_string(),
        address: wanted.trim().to_string(),
        region: t.region,
        x: t.x + dx,
        y: t.y + dy,
    })
}

fn compass(dx: f64, dy: f64) -> &'static str {
    let angle = dy.atan2(dx).to_degrees();
    const NAMES: [&str; 8] =
        ["east", "northeast", "north", "northwest", "west", "southwest", "south", "southeast"];
    let sector = (((angle + 360.0 + 22.5) % 360.0) / 45.0).floor() as usize;
    NAMES[sector.min(7)]
}

/// Minutes by `mode` over `road_km`.
fn minutes(mode: &str, road_km: f64) -> i64 {
    let (_, speed, fixed) = MODES.iter().find(|(m, ..)| *m == mode).copied().unwrap_or(MODES[0]);
    (road_km / speed * 60.0 + fixed).round().max(1.0) as i64
}

fn place_json(p: &Place) -> Value {
    json!({
        "name": p.name,
        "category": p.category,
        "address": address_of(p),
        "town": p.town,
        "phone": p.phone,
        "opening_hours": p.hours,
    })
}

/// The maps server.
pub struct Geo;

impl Geo {
    /// The server (stateless).
    pub fn new() -> Geo {
        Geo
    }

    fn search(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let query = fold(required(args, "query")?);
        let words: Vec<&str> = query.split(' ').filter(|w| !w.is_empty()).collect();
        let town_filter = text(args, "town").map(fold);
        let mut hits: Vec<&Place> = PLACES
            .iter()
            .filter(|p| town_filter.as_ref().is_none_or(|t| fold(p.town) == *t))
            .filter(|p| {
                let hay = fold(&format!("{} {} {} {}", p.name, p.category, p.street, p.town));
                words.iter().all(|w| hay.contains(w))
            })
            .collect();
        hits.sort_by_key(|p| p.name);
        Ok(
            json!({ "query": query, "results": hits.iter().take(10).map(|p| place_json(p)).collect::<Vec<_>>() }),
        )
    }

    fn route(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let from = locate(required(args, "origin")?)?;
        let to = locate(required(args, "destination")?)?;
        let mode = text(args, "mode").unwrap_or("drive");
        if from.region != to.region {
            return Err(ToolError(format!(
                "no ground route from {} ({}) to {} ({}): they are in different regions",
                from.label, from.region, to.label, to.region
            )));
        }
        let (dx, dy) = (to.x - from.x, to.y - from.y);
        let straight = (dx * dx + dy * dy).sqrt();
        let road = round((straight * ROAD_FACTOR).max(0.1), 1);
        let duration = minutes(mode, road);
        let steps = vec![
            format!("Head {} from {}", compass(dx, dy), from.label),
            format!("Continue for {road} km"),
            format!("Arrive at {} ({})", to.label, to.address),
        ];
        Ok(json!({
            "origin": from.label,
            "destination": to.label,
            "destination_address": to.address,
            "mode": mode,
            "distance_km": road,
            "duration_min": duration,
            "steps": steps,
        }))
    }

    fn nearby(&self, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let center = locate(required(args, "near")?)?;
        let category = fold(required(args, "category")?);
        let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(5).clamp(1, 10) as usize;
        let mut found: Vec<(f64, &Place)> = PLACES
            .iter()
            .filter(|p| fold(p.category).contains(&category))
            .filter(|p| town(p.town).is_some_and(|t| t.region == center.region))
            .map(|p| (((p.x - center.x).powi(2) + (p.y - center.y).powi(2)).sqrt(), p))
            .collect();
        found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.name.cmp(b.1.name)));
        let results: Vec<Value> = found
            .iter()
            .take(limit)
            .map(|(d, p)| {
                let mut v = place_json(p);
                v["straight_line_km"] = json!(round(*d, 1));
                v
            })
            .collect();
        Ok(json!({ "near": center.label, "category": category, "results": results }))
    }
}

impl OfflineServer for Geo {
    fn name(&self) -> &'static str {
        "geo"
    }

    fn instructions(&self) -> &'static str {
        "Offline maps of the Riverton area (Riverton, Cedar Falls, Lakeview, Brookside, Fairhaven, Millbrook) \
         and a few places in Zurich, London and Lisbon: search places, look one up, route between places or \
         street addresses, and find the nearest place of a kind."
    }

    fn tools(&self) -> Vec<ToolDef> {
        let modes: Vec<&str> = MODES.iter().map(|m| m.0).collect();
        vec![
            ToolDef {
                name: "search_places",
                description: "Search places by words of their name, category, street or town. Returns up to 10 places with address, phone and opening hours.",
                input_schema: object_schema(
                    &[
                        ("query", "string", "words to look for, e.g. \"pharmacy\" or \"cafe lumen\""),
                        ("town", "string", "only places in this town"),
                    ],
                    &["query"],
                ),
            },
            ToolDef {
                name: "get_place",
                description: "Details of one place by name: category, address, phone, opening hours.",
                input_schema: object_schema(&[("name", "string", "the place's name")], &["name"]),
            },
            ToolDef {
                name: "route",
                description: "Route between two places or street addresses: road distance in km, travel time in minutes, and directions.",
                input_schema: with_enum(
                    object_schema(
                        &[
                            ("origin", "string", "a place name or a street address with its town"),
                            ("destination", "string", "a place name or a street address with its town"),
                            ("mode", "string", "how to travel (default drive)"),
                        ],
                        &["origin", "destination"],
                    ),
                    "mode",
                    &modes,
                ),
            },
            ToolDef {
                name: "nearby",
                description: "The places of a category nearest to a place or address, closest first, with straight-line distances.",
                input_schema: object_schema(
                    &[
                        ("near", "string", "a place name or a street address"),
                        ("category", "string", "e.g. pharmacy, supermarket, restaurant"),
                        ("limit", "integer", "how many (1-10, default 5)"),
                    ],
                    &["near", "category"],
                ),
            },
        ]
    }

    fn call(&mut self, tool: &str, args: &Map<String, Value>) -> Result<Value, ToolError> {
        match tool {
            "search_places" => self.search(args),
            "get_place" => Ok(place_json(find_one(PLACES, |p| p.name, required(args, "name")?, "place")?)),
            "route" => self.route(args),
            "nearby" => self.nearby(args),
            other => Err(ToolError(format!("no tool `{other}`"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, args: Value) -> Result<Value, ToolError> {
        Geo::new().call(tool, args.as_object().unwrap())
    }

    #[test]
    fn routes_are_deterministic_and_mode_dependent() {
        let drive = call("route", json!({"origin": "Home", "destination": "Coho Winery"})).unwrap();
        let again =
            call("route", json!({"origin": "home", "destination": "coho winery", "mode": "drive"})).unwrap();
        assert_eq!(drive, again);
        let walk =
            call("route", json!({"origin": "Home", "destination": "Coho Winery", "mode": "walk"})).unwrap();
        assert!(walk["duration_min"].as_i64() > drive["duration_min"].as_i64());
        assert_eq!(drive["distance_km"], walk["distance_km"]);
        // 1.3 × √(21.4² + 11.2²) = 31.4 km; 31.4 / 40 × 60 + 3 = 50 min.
        assert_eq!(drive["distance_km"], json!(31.4));
        assert_eq!(drive["duration_min"], json!(50));
    }

    #[test]
    fn addresses_route_and_regions_do_not_mix() {
        let r =
            call("route", json!({"origin": "643 Oak Terrace, Cedar Falls, OR 97205", "destination": "Home"}))
                .unwrap();
        assert!(r["duration_min"].as_i64().unwrap() > 15, "{r}");
        let e = call("route", json!({"origin": "Home", "destination": "Zurich Airport"})).unwrap_err();
        assert!(e.0.contains("different regions"), "{e}");
        let e = call("route", json!({"origin": "Home", "destination": "Atlantis"})).unwrap_err();
        assert!(e.0.contains("no place or address"), "{e}");
    }

    #[test]
    fn towns_places_and_their_addresses_locate_where_they_are() {
        let via_name = call("route", json!({"origin": "Home", "destination": "Coho Winery"})).unwrap();
        let via_address = call(
            "route",
            json!({"origin": "18 Harbor Street, Riverton", "destination": "2 Vineyard Lane, Cedar Falls"}),
        )
        .unwrap();
        assert_eq!(via_name["duration_min"], via_address["duration_min"]);
        let town = call("route", json!({"origin": "Riverton", "destination": "Cedar Falls"})).unwrap();
        assert_eq!(town["destination"], "Cedar Falls", "a town is its centre, not a place named after it");
        // The town comes from after the comma: a Riverton street name does not move it.
        let street =
            call("route", json!({"origin": "Home", "destination": "1 Riverton Road, Millbrook"})).unwrap();
        assert!(street["distance_km"].as_f64().unwrap() > 30.0, "{street}");
    }

    #[test]
    fn search_and_nearby() {
        let r = call("search_places", json!({"query": "pharmacy"})).unwrap();
        assert_eq!(r["results"].as_array().unwrap().len(), 3);
        let n = call("nearby", json!({"near": "Home", "category": "pharmacy", "limit": 1})).unwrap();
        assert_eq!(n["results"][0]["name"], "Oakwood Pharmacy");
        let p = call("get_place", json!({"name": "riverbend"})).unwrap();
        assert_eq!(p["phone"], "(206) 555-0199", "as in Contacts");
    }
}
