// lexgold rating site. Sliders show no answer until touched (click, drag, keys, touch); the
// value and the response time go into hidden fields; a form is sent once (double clicks).
// A page never inherits form state (the back button, a restored tab): every form is reset to
// what the server sent when the page is shown, so an untouched slider sits at its start value.
"use strict";
(function () {
  var loaded = Date.now();

  function touch(slider) {
    var box = slider.closest("fieldset");
    slider.classList.remove("untouched");
    box.querySelector(".rating-value").value = slider.value;
    box.querySelector("output").textContent = slider.value;
    box.querySelector(".rt").value = String(Date.now() - loaded);
    update(slider.form);
  }

  // Submit stays usable for assistive technology but is marked aria-disabled while sliders
  // are untouched; the reason is written next to it, and a click on it marks what is missing.
  function update(form) {
    var button = form.querySelector("button[type=submit]");
    var left = form.querySelectorAll(".slider.untouched").length;
    var why = form.querySelector(".why");
    form.querySelectorAll("fieldset.missing").forEach(function (box) {
      if (!box.querySelector(".slider.untouched")) { box.classList.remove("missing"); }
    });
    if (button) {
      button.disabled = false;
      button.setAttribute("aria-disabled", left > 0 ? "true" : "false");
    }
    if (why) {
      why.textContent = why.dataset.text.replace("{left}", String(left));
      why.hidden = left === 0;
    }
  }

  function blocked(form) {
    var missing = form.querySelectorAll(".slider.untouched");
    if (!missing.length) { return false; }
    missing.forEach(function (slider) { slider.closest("fieldset").classList.add("missing"); });
    missing[0].focus();
    missing[0].closest("fieldset").scrollIntoView({ block: "center" });
    return true;
  }

  function fresh(form) {
    form.reset();
    delete form.dataset.sent;
    form.querySelectorAll(".rating-value, .rt, input[name=t]").forEach(function (field) {
      field.value = "";
    });
    form.querySelectorAll("fieldset.missing").forEach(function (box) {
      box.classList.remove("missing");
    });
    form.querySelectorAll(".same-pair").forEach(function (hint) { hint.hidden = true; });
    form.querySelectorAll(".tuple input[type=radio]").forEach(function (radio) {
      radio.setCustomValidity("");
      radio.removeAttribute("aria-invalid");
    });
    form.querySelectorAll(".slider").forEach(function (slider) {
      slider.value = slider.getAttribute("value");
      slider.classList.add("untouched");
      slider.closest("fieldset").querySelector("output").textContent = "\u2013";
    });
    var button = form.querySelector("button[type=submit]");
    if (button) { button.disabled = button.hasAttribute("data-preview"); }
    if (form.classList.contains("rating")) { update(form); }
  }

  // without the clipboard API: the code selected and copied the old way
  function selectCode() {
    var range = document.createRange();
    range.selectNodeContents(document.getElementById("code"));
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    try { document.execCommand("copy"); } catch (err) { /* selected: the rater copies it */ }
  }

  // pageshow: the first show (after DOMContentLoaded) and every return from the back-forward
  // cache. The first show resets again only if the rater has not answered anything yet.
  var interacted = false;
  ["input", "change", "keydown", "pointerdown"].forEach(function (name) {
    document.addEventListener(name, function () { interacted = true; }, true);
  });
  window.addEventListener("pageshow", function (event) {
    if (event.persisted || !interacted) {
      loaded = Date.now();
      interacted = false;
      document.querySelectorAll("form").forEach(fresh);
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".slider").forEach(function (slider) {
      ["input", "change", "pointerdown", "click", "touchstart"].forEach(function (name) {
        slider.addEventListener(name, function () { touch(slider); }, { passive: true });
      });
      slider.addEventListener("keydown", function (event) {
        if (["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp",
             "PageDown", " ", "Enter"].indexOf(event.key) >= 0) {
          setTimeout(function () { touch(slider); }, 0);
        }
      });
    });
    document.querySelectorAll("form.rating input[type=radio]").forEach(function (radio) {
      radio.addEventListener("change", function () {
        radio.closest("fieldset").querySelector(".rt").value = String(Date.now() - loaded);
      });
    });
    document.querySelectorAll("form.timed input[type=radio]").forEach(function (radio) {
      radio.addEventListener("change", function () {
        radio.form.querySelector("input[name=t]").value = String(Date.now() - loaded);
      });
    });
    // Best-Worst Scaling: the same pair as most and least is refused before sending (the
    // server refuses it too); the hint says why, next to the tuple
    document.querySelectorAll("form.bws .tuple").forEach(function (tuple) {
      var key = tuple.dataset.tuple;
      tuple.querySelectorAll("input[type=radio]").forEach(function (radio) {
        radio.addEventListener("change", function () {
          tuple.querySelector(".rt").value = String(Date.now() - loaded);
          var best = tuple.querySelector("input[name='b" + key + "']:checked");
          var worst = tuple.querySelector("input[name='w" + key + "']:checked");
          var same = !!(best && worst && best.value === worst.value);
          var hint = tuple.querySelector(".same-pair");
          hint.hidden = !same;
          tuple.querySelectorAll("input[name='w" + key + "']").forEach(function (w) {
            w.setCustomValidity(same ? hint.textContent : "");
            w.setAttribute("aria-invalid", same ? "true" : "false");
          });
        });
      });
    });
    // the completion page: the copy button appears only where a script can copy the code
    var copy = document.getElementById("copy");
    if (copy) {
      copy.hidden = false;
      copy.addEventListener("click", function () {
        var status = document.getElementById("copied");
        function said() { status.textContent = status.dataset.text; }
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(copy.dataset.code).then(said, function () {
            selectCode(); said();
          });
        } else { selectCode(); said(); }
      });
    }
    document.querySelectorAll("form").forEach(fresh);
    document.querySelectorAll("form.rating").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (blocked(form)) { event.preventDefault(); }
      });
    });
    document.querySelectorAll("form.once").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (event.defaultPrevented || form.dataset.sent) { event.preventDefault(); return; }
        form.dataset.sent = "1";
        var button = form.querySelector("button[type=submit]");
        setTimeout(function () { if (button) { button.disabled = true; } }, 0);
      });
    });
  });
})();
