/**
 * The bundled sample photos (images/, see images/ATTRIBUTION.md): scikit-image's sample images.
 */

/** @type {ReadonlyArray<{id: string, file: string, title: string, credit: string, licence: string}>} */
export const PHOTOS = Object.freeze([
  {id: 'coffee', file: 'images/coffee.jpg', title: 'Coffee',
    credit: 'Coffee cup, courtesy of Pikolo Espresso Bar; photo by Rachel Michetti', licence: 'CC0'},
  {id: 'chelsea', file: 'images/chelsea.jpg', title: 'Chelsea the cat',
    credit: 'Chelsea the cat; photo by Stefan van der Walt', licence: 'CC0'},
  {id: 'astronaut', file: 'images/astronaut.jpg', title: 'Astronaut',
    credit: 'Astronaut Eileen Collins; NASA, from the NASA Great Images database', licence: 'public domain'},
]);

/** Credit line shown under the picture. */
export function attributionText(photo) {
  return `${photo.credit} (${photo.licence}), via scikit-image's sample data.`;
}
