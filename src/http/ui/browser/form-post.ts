// Runs in the browser (served at /assets/form-post as a module script; compiled by tsc with the DOM
// library). It submits the form_post response page's form at once (OAuth 2.0 Form Post Response
// Mode §2): the page's policy allows no inline script, and a script of our own origin needs none.
const form = document.getElementById('authorization-response');
if (form instanceof HTMLFormElement) form.submit();
