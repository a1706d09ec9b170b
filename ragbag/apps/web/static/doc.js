// The reading page: the cited passage is brought to the middle of the screen and focused, so
// a keyboard or screen-reader user starts there (the #hit link scrolls to it without script).
"use strict";
(function () {
  const hit = document.getElementById("hit");
  if (!hit) return;
  hit.scrollIntoView({ block: "center" });
  hit.focus({ preventScroll: true });
})();
