// The API's OpenAPI 3 document, served at /api/openapi.json. Generated from design/api.md
// by scripts/sync-openapi.py; a test keeps the two equal.
enum OpenAPIDocument {
    static let json = #"""
{
  "openapi": "3.0.3",
  "info": {
    "title": "nvr HTTP API",
    "version": "1",
    "description": "Playback by date, any-range MP4 and snapshots. Times are accepted as RFC 3339 or 90 kHz integers; answers carry both (`start` and `start90k`). Errors are `{\"error\": code, \"message\": text}`. See design/api.md."
  },
  "servers": [
    {
      "url": "http://127.0.0.1:8080"
    }
  ],
  "paths": {
    "/api/cameras": {
      "get": {
        "operationId": "listCameras",
        "summary": "Every camera with its state and storage.",
        "responses": {
          "200": {
            "description": "Cameras",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/CameraList"
                }
              }
            }
          }
        }
      }
    },
    "/api/cameras/{name}": {
      "get": {
        "operationId": "getCamera",
        "summary": "One camera.",
        "parameters": [
          {
            "name": "name",
            "in": "path",
            "required": true,
            "description": "Camera name.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "The camera",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Camera"
                }
              }
            }
          },
          "404": {
            "description": "No camera of that name (`not_found`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/cameras/{name}/days": {
      "get": {
        "operationId": "getDays",
        "summary": "The local days of a month that have recordings.",
        "parameters": [
          {
            "name": "name",
            "in": "path",
            "required": true,
            "description": "Camera name.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "month",
            "in": "query",
            "required": true,
            "description": "YYYY-MM",
            "schema": {
              "type": "string",
              "pattern": "^[0-9]{4}-[0-9]{2}$"
            }
          },
          {
            "name": "tz",
            "in": "query",
            "required": false,
            "description": "IANA time zone (Europe/Paris, Asia/Kolkata); default: the server's.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Days with recordings",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Days"
                }
              }
            }
          },
          "400": {
            "description": "Malformed parameter, or end ≤ start (`bad_request`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No camera of that name (`not_found`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/cameras/{name}/timeline": {
      "get": {
        "operationId": "getTimeline",
        "summary": "Contiguous recorded slices of a local day, or of start…end.",
        "parameters": [
          {
            "name": "name",
            "in": "path",
            "required": true,
            "description": "Camera name.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "date",
            "in": "query",
            "required": false,
            "description": "YYYY-MM-DD (a local day in tz). Give this or start and end.",
            "schema": {
              "type": "string",
              "format": "date"
            }
          },
          {
            "name": "tz",
            "in": "query",
            "required": false,
            "description": "IANA time zone (Europe/Paris, Asia/Kolkata); default: the server's.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "start",
            "in": "query",
            "required": false,
            "description": "Range start. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "end",
            "in": "query",
            "required": false,
            "description": "Range end. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Slices, clipped to the range",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Timeline"
                }
              }
            }
          },
          "400": {
            "description": "Malformed parameter, or end ≤ start (`bad_request`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No camera of that name (`not_found`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/cameras/{name}/recordings": {
      "get": {
        "operationId": "getRecordings",
        "summary": "Segments overlapping start…end (empty list when none).",
        "parameters": [
          {
            "name": "name",
            "in": "path",
            "required": true,
            "description": "Camera name.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "start",
            "in": "query",
            "required": true,
            "description": "Range start. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "end",
            "in": "query",
            "required": true,
            "description": "Range end. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Segments",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Recordings"
                }
              }
            }
          },
          "400": {
            "description": "Malformed parameter, or end ≤ start (`bad_request`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No camera of that name (`not_found`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/cameras/{name}/view.mp4": {
      "get": {
        "operationId": "getView",
        "summary": "One ordinary MP4 of start…end, built from the index.",
        "description": "Starts at the key frame before `start` with an edit list, so playback begins at `start`. The file's timeline is the wall clock: a gap in the recordings holds the last picture and is listed in `X-Recording-Gaps`. A codec or resolution change ends the file (`X-Recording-Truncated90k`). Supports `Range` (206/416), `If-Range`, `If-None-Match`, and HEAD.",
        "parameters": [
          {
            "name": "name",
            "in": "path",
            "required": true,
            "description": "Camera name.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "start",
            "in": "query",
            "required": true,
            "description": "Range start. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "end",
            "in": "query",
            "required": true,
            "description": "Range end. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "Range",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            },
            "description": "bytes=first-last, bytes=first- or bytes=-suffix"
          }
        ],
        "responses": {
          "200": {
            "description": "The whole file",
            "headers": {
              "ETag": {
                "schema": {
                  "type": "string"
                }
              },
              "Content-Length": {
                "schema": {
                  "type": "integer"
                }
              },
              "Accept-Ranges": {
                "schema": {
                  "type": "string"
                }
              },
              "X-Recording-Start90k": {
                "schema": {
                  "type": "integer"
                },
                "description": "What the file covers (the request clipped to the recordings)"
              },
              "X-Recording-End90k": {
                "schema": {
                  "type": "integer"
                }
              },
              "X-Recording-Gaps": {
                "schema": {
                  "type": "string"
                },
                "description": "Comma-separated start90k-end90k spans with no recording"
              }
            },
            "content": {
              "video/mp4": {
                "schema": {
                  "type": "string",
                  "format": "binary"
                }
              }
            }
          },
          "206": {
            "description": "The requested bytes",
            "headers": {
              "Content-Range": {
                "schema": {
                  "type": "string"
                }
              }
            },
            "content": {
              "video/mp4": {
                "schema": {
                  "type": "string",
                  "format": "binary"
                }
              }
            }
          },
          "304": {
            "description": "If-None-Match matched"
          },
          "400": {
            "description": "Malformed time, end ≤ start, or longer than http.max_view_seconds (`range_too_long`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "Unknown camera, or nothing recorded in the range (`nothing_recorded`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "416": {
            "description": "Range outside the file (`range_not_satisfiable`); Content-Range: bytes */size.",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/cameras/{name}/snapshot.jpg": {
      "get": {
        "operationId": "getSnapshot",
        "summary": "A JPEG: the newest key frame (cached 1 s), or the recorded frame nearest `at`.",
        "parameters": [
          {
            "name": "name",
            "in": "path",
            "required": true,
            "description": "Camera name.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "at",
            "in": "query",
            "required": false,
            "description": "Time of the frame wanted; omit for the newest. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "width",
            "in": "query",
            "required": false,
            "description": "Scale to this width (16…7680, never wider than the picture); the height follows.",
            "schema": {
              "type": "integer",
              "minimum": 16,
              "maximum": 7680
            }
          }
        ],
        "responses": {
          "200": {
            "description": "JPEG; X-Frame-Time / X-Frame-Time90k say when the frame was captured",
            "headers": {
              "X-Frame-Time90k": {
                "schema": {
                  "type": "integer"
                }
              }
            },
            "content": {
              "image/jpeg": {
                "schema": {
                  "type": "string",
                  "format": "binary"
                }
              }
            }
          },
          "400": {
            "description": "Malformed parameter, or end ≤ start (`bad_request`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "Unknown camera, or nothing recorded at that time (`nothing_recorded`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/cameras/{name}/thumbnails": {
      "get": {
        "operationId": "getThumbnails",
        "summary": "N evenly spaced snapshot URLs over start…end, for a timeline strip.",
        "parameters": [
          {
            "name": "name",
            "in": "path",
            "required": true,
            "description": "Camera name.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "start",
            "in": "query",
            "required": true,
            "description": "Range start. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "end",
            "in": "query",
            "required": true,
            "description": "Range end. RFC 3339 (2026-11-22T08:00:00Z) or 90 kHz ticks since the Unix epoch.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "count",
            "in": "query",
            "required": false,
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 500,
              "default": 10
            }
          },
          {
            "name": "width",
            "in": "query",
            "required": false,
            "schema": {
              "type": "integer",
              "minimum": 16,
              "maximum": 7680,
              "default": 320
            }
          }
        ],
        "responses": {
          "200": {
            "description": "Thumbnail URLs",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Thumbnails"
                }
              }
            }
          },
          "400": {
            "description": "Malformed parameter, or end ≤ start (`bad_request`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          },
          "404": {
            "description": "No camera of that name (`not_found`).",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Error"
                }
              }
            }
          }
        }
      }
    },
    "/api/openapi.json": {
      "get": {
        "operationId": "getOpenAPI",
        "summary": "This document.",
        "responses": {
          "200": {
            "description": "OpenAPI 3",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object"
                }
              }
            }
          }
        }
      }
    }
  },
  "components": {
    "schemas": {
      "Error": {
        "type": "object",
        "required": [
          "error",
          "message"
        ],
        "properties": {
          "error": {
            "type": "string",
            "description": "not_found, bad_request, nothing_recorded, range_too_long, range_not_satisfiable, internal…"
          },
          "message": {
            "type": "string"
          }
        }
      },
      "Stream": {
        "type": "object",
        "required": [
          "codec",
          "rfc6381"
        ],
        "properties": {
          "codec": {
            "type": "string",
            "enum": [
              "h264",
              "h265",
              "aac"
            ]
          },
          "rfc6381": {
            "type": "string"
          },
          "width": {
            "type": "integer"
          },
          "height": {
            "type": "integer"
          },
          "sampleRate": {
            "type": "integer"
          },
          "channels": {
            "type": "integer"
          }
        }
      },
      "Camera": {
        "type": "object",
        "required": [
          "name",
          "plugin",
          "enabled",
          "state",
          "bytes",
          "segments"
        ],
        "properties": {
          "name": {
            "type": "string"
          },
          "plugin": {
            "type": "string"
          },
          "enabled": {
            "type": "boolean"
          },
          "state": {
            "type": "string",
            "enum": [
              "stopped",
              "connecting",
              "streaming",
              "lost",
              "failed"
            ]
          },
          "reason": {
            "type": "string",
            "description": "Why the camera is not streaming."
          },
          "since": {
            "type": "string",
            "format": "date-time",
            "description": "When the state began"
          },
          "since90k": {
            "type": "integer",
            "format": "int64",
            "description": "When the state began (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "lastFrame": {
            "type": "string",
            "format": "date-time",
            "description": "The newest recorded frame"
          },
          "lastFrame90k": {
            "type": "integer",
            "format": "int64",
            "description": "The newest recorded frame (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "video": {
            "$ref": "#/components/schemas/Stream"
          },
          "audio": {
            "$ref": "#/components/schemas/Stream"
          },
          "fps": {
            "type": "number"
          },
          "bitRate": {
            "type": "integer",
            "description": "bits per second, measured"
          },
          "bytes": {
            "type": "integer",
            "format": "int64",
            "description": "Bytes stored"
          },
          "segments": {
            "type": "integer"
          },
          "oldest": {
            "type": "string",
            "format": "date-time",
            "description": "Start of the oldest recording"
          },
          "oldest90k": {
            "type": "integer",
            "format": "int64",
            "description": "Start of the oldest recording (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "newest": {
            "type": "string",
            "format": "date-time",
            "description": "End of the newest recording"
          },
          "newest90k": {
            "type": "integer",
            "format": "int64",
            "description": "End of the newest recording (90 kHz ticks since 1970-01-01T00:00:00Z)"
          }
        }
      },
      "CameraList": {
        "type": "object",
        "required": [
          "cameras"
        ],
        "properties": {
          "cameras": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/Camera"
            }
          }
        }
      },
      "Day": {
        "type": "object",
        "required": [
          "date",
          "start",
          "start90k",
          "end",
          "end90k",
          "hours",
          "recordedSeconds"
        ],
        "properties": {
          "date": {
            "type": "string",
            "format": "date"
          },
          "start": {
            "type": "string",
            "format": "date-time",
            "description": "Local midnight"
          },
          "start90k": {
            "type": "integer",
            "format": "int64",
            "description": "Local midnight (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "end": {
            "type": "string",
            "format": "date-time",
            "description": "Next local midnight"
          },
          "end90k": {
            "type": "integer",
            "format": "int64",
            "description": "Next local midnight (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "hours": {
            "type": "number",
            "description": "23, 24 or 25 (DST)"
          },
          "recordedSeconds": {
            "type": "number"
          }
        }
      },
      "Days": {
        "type": "object",
        "required": [
          "camera",
          "month",
          "tz",
          "days"
        ],
        "properties": {
          "camera": {
            "type": "string"
          },
          "month": {
            "type": "string"
          },
          "tz": {
            "type": "string"
          },
          "days": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/Day"
            }
          }
        }
      },
      "Slice": {
        "type": "object",
        "required": [
          "start",
          "end",
          "start90k",
          "end90k",
          "kind",
          "source",
          "segments",
          "bytes"
        ],
        "properties": {
          "start": {
            "type": "string",
            "format": "date-time",
            "description": "Slice start"
          },
          "start90k": {
            "type": "integer",
            "format": "int64",
            "description": "Slice start (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "end": {
            "type": "string",
            "format": "date-time",
            "description": "Slice end"
          },
          "end90k": {
            "type": "integer",
            "format": "int64",
            "description": "Slice end (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "kind": {
            "type": "string",
            "enum": [
              "continuous",
              "event"
            ]
          },
          "source": {
            "type": "string",
            "enum": [
              "disk",
              "card",
              "cloud"
            ]
          },
          "segments": {
            "type": "integer"
          },
          "bytes": {
            "type": "integer",
            "format": "int64"
          }
        }
      },
      "Timeline": {
        "type": "object",
        "required": [
          "camera",
          "start",
          "start90k",
          "end",
          "end90k",
          "slices"
        ],
        "properties": {
          "camera": {
            "type": "string"
          },
          "tz": {
            "type": "string"
          },
          "date": {
            "type": "string"
          },
          "start": {
            "type": "string",
            "format": "date-time",
            "description": "Range start"
          },
          "start90k": {
            "type": "integer",
            "format": "int64",
            "description": "Range start (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "end": {
            "type": "string",
            "format": "date-time",
            "description": "Range end"
          },
          "end90k": {
            "type": "integer",
            "format": "int64",
            "description": "Range end (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "slices": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/Slice"
            }
          }
        }
      },
      "Segment": {
        "type": "object",
        "required": [
          "id",
          "run",
          "start",
          "start90k",
          "end",
          "end90k",
          "bytes",
          "frames",
          "keyFrames",
          "state",
          "source",
          "hasEvent",
          "video"
        ],
        "properties": {
          "id": {
            "type": "integer",
            "format": "int64"
          },
          "run": {
            "type": "integer",
            "format": "int64",
            "description": "Segments of one run follow each other without a gap."
          },
          "start": {
            "type": "string",
            "format": "date-time",
            "description": "Segment start"
          },
          "start90k": {
            "type": "integer",
            "format": "int64",
            "description": "Segment start (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "end": {
            "type": "string",
            "format": "date-time",
            "description": "Segment end"
          },
          "end90k": {
            "type": "integer",
            "format": "int64",
            "description": "Segment end (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "bytes": {
            "type": "integer",
            "format": "int64"
          },
          "frames": {
            "type": "integer"
          },
          "keyFrames": {
            "type": "integer"
          },
          "state": {
            "type": "string",
            "enum": [
              "writing",
              "complete"
            ]
          },
          "source": {
            "type": "string",
            "description": "live or card"
          },
          "hasEvent": {
            "type": "boolean"
          },
          "video": {
            "type": "string",
            "description": "RFC 6381 codec"
          },
          "audio": {
            "type": "string"
          }
        }
      },
      "Recordings": {
        "type": "object",
        "required": [
          "camera",
          "start",
          "start90k",
          "end",
          "end90k",
          "recordings"
        ],
        "properties": {
          "camera": {
            "type": "string"
          },
          "start": {
            "type": "string",
            "format": "date-time",
            "description": "Range start"
          },
          "start90k": {
            "type": "integer",
            "format": "int64",
            "description": "Range start (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "end": {
            "type": "string",
            "format": "date-time",
            "description": "Range end"
          },
          "end90k": {
            "type": "integer",
            "format": "int64",
            "description": "Range end (90 kHz ticks since 1970-01-01T00:00:00Z)"
          },
          "recordings": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/Segment"
            }
          }
        }
      },
      "Thumbnails": {
        "type": "object",
        "required": [
          "camera",
          "thumbnails"
        ],
        "properties": {
          "camera": {
            "type": "string"
          },
          "thumbnails": {
            "type": "array",
            "items": {
              "type": "object",
              "required": [
                "at",
                "at90k",
                "recorded",
                "url"
              ],
              "properties": {
                "at": {
                  "type": "string",
                  "format": "date-time",
                  "description": "Time of the thumbnail"
                },
                "at90k": {
                  "type": "integer",
                  "format": "int64",
                  "description": "Time of the thumbnail (90 kHz ticks since 1970-01-01T00:00:00Z)"
                },
                "recorded": {
                  "type": "boolean"
                },
                "url": {
                  "type": "string"
                }
              }
            }
          }
        }
      }
    }
  }
}
"""#
}
