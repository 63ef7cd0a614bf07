# The index (the page the shootouts measure), one article, and an about page for browsing sessions.
Rails.application.routes.draw do
  root "articles#index"
  resources :articles, only: %i[index show]
  get "about", to: "articles#about"
end
