// Redux store of the NodeApp fixture (@reduxjs/toolkit): one store per render,
// preloaded from the props Rails sends, as React on Rails apps do.
import { configureStore, createSlice } from '@reduxjs/toolkit';

const sessionSlice = createSlice({
  name: 'session',
  initialState: { user: null, visits: [] },
  reducers: {
    visited(state, action) {
      state.visits.push(action.payload);
    },
  },
});

const cartSlice = createSlice({
  name: 'cart',
  initialState: { items: [] },
  reducers: {
    addItem(state, action) {
      const existing = state.items.find((item) => item.sku === action.payload.sku);
      if (existing) existing.qty += action.payload.qty;
      else state.items.push({ ...action.payload });
    },
  },
});

export const { visited } = sessionSlice.actions;
export const { addItem } = cartSlice.actions;

export const selectUser = (state) => state.session.user;
export const selectVisits = (state) => state.session.visits;
export const selectCart = (state) => state.cart.items;
export const selectCartTotal = (state) =>
  state.cart.items.reduce((sum, item) => sum + item.qty * item.priceCents, 0);

export function createStore(preloadedState) {
  return configureStore({
    reducer: { session: sessionSlice.reducer, cart: cartSlice.reducer },
    preloadedState,
  });
}
