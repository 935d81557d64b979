/** The default favicon and brand mark, served at /assets/icon: a gatehouse arch. */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#0b57d0"/>
<path d="M7 26V12l3-3 3 3v2h6v-2l3-3 3 3v14h-7v-6a2 2 0 0 0-4 0v6z" fill="#fff"/>
</svg>
`;
